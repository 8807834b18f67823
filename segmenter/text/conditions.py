"""The conditions text is trained and read under, named once.

A condition is how a document's text is presented: CLEAN (as written, sentences joined by one space),
CORRUPT (lowercase, without punctuation: `segmenter.gold.corpus.corrupt`, as in transcripts and chat; read
with the unpunctuated threshold), and the LAYOUTS, clean text laid out in lines: LINES (each paragraph
on a line of its own, `segmenter.gold.corpus.with_line_breaks`) and WRAPPED (the same, hard-wrapped,
`segmenter.gold.corpus.wrapped`). The segmenter judges every text CLEAN or CORRUPT by its look
(`condition_for`, from the text's first LOOK_CHARS characters); a probe's meta keeps a threshold per
condition under these names.

Nothing here builds documents.
"""

from __future__ import annotations

import re

from segmenter.text.charclasses import PUNCTUATED_TEXT_MARKS
from segmenter.text.line_headers import without_headers

CLEAN = "clean"
CORRUPT = "corrupt"
LINES = "lines"
WRAPPED = "wrapped"

TEXT_CONDITIONS = (CLEAN, CORRUPT)  # what a text is judged to be when it is read; the default for training
LAYOUTS = (LINES, WRAPPED)  # clean text laid out in lines, for probes that read line breaks
TRAINING_CONDITIONS = TEXT_CONDITIONS + LAYOUTS  # every condition training can lay documents out in

LOOK_CHARS = 1 << 16  # the text's first characters, which choose its condition (`condition_for`)
_PUNCTUATED_TEXT_MARK = re.compile(f"[{re.escape(PUNCTUATED_TEXT_MARKS)}]")


def looks_unpunctuated(text: str) -> bool:
    """True when `text` has no upper-case letter and none of PUNCTUATED_TEXT_MARKS (. ! ? … 。！？): a
    transcript, chat. The header of a chat or transcript line (a timestamp, a nickname, a speaker label:
    `segmenter.text.line_headers`) does not count.

    >>> looks_unpunctuated("so we left early"), looks_unpunctuated("So we left."), looks_unpunctuated("ok.")
    (True, False, False)
    >>> looks_unpunctuated("A: so we left\\nB: yeah"), looks_unpunctuated("[09:15] <Jo> So we left.")
    (True, False)
    """
    text = without_headers(text)
    return text == text.lower() and _PUNCTUATED_TEXT_MARK.search(text) is None


def condition_for(text: str) -> str:
    """ "corrupt" (read with the unpunctuated threshold) if the first LOOK_CHARS characters of `text`
    have no case or punctuation, else "clean". A streamed text is judged by its start too, so a text
    gets the same threshold whether it is segmented whole or streamed."""
    return CORRUPT if looks_unpunctuated(text[:LOOK_CHARS]) else CLEAN
