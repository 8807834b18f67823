"""The conditions text is trained and read under, named once.

A condition is how a document's text is presented: CLEAN (as written, sentences joined by one space),
CORRUPT (lowercase, without punctuation: `segmenter.corpus.corrupt`, as in transcripts and chat; read
with the unpunctuated threshold), and the LAYOUTS, clean text laid out in lines: LINES (each paragraph
on a line of its own, `segmenter.corpus.with_line_breaks`) and WRAPPED (the same, hard-wrapped,
`segmenter.corpus.wrapped`). The segmenter judges every text CLEAN or CORRUPT by its look
(`segmenter.stream.condition_for`); a probe's meta keeps a threshold per condition under these names.

Nothing here reads text or builds documents.
"""

from __future__ import annotations

CLEAN = "clean"
CORRUPT = "corrupt"
LINES = "lines"
WRAPPED = "wrapped"

TEXT_CONDITIONS = (CLEAN, CORRUPT)  # what a text is judged to be when it is read; the default for training
LAYOUTS = (LINES, WRAPPED)  # clean text laid out in lines, for probes that read line breaks
TRAINING_CONDITIONS = TEXT_CONDITIONS + LAYOUTS  # every condition training can lay documents out in
