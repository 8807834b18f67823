"""The conditions text is trained and read under, named once.

A condition is how a document's text is presented: CLEAN (as written, sentences joined by one space),
CORRUPT (lowercase, without punctuation: `segmenter.gold.corpus.corrupt`, as in transcripts and chat;
read with the unpunctuated threshold), SPOKEN (unpunctuated text that reads as speech: `looks_spoken`;
read as CORRUPT is, decoded with a threshold of its own where the probe has one), and the LAYOUTS,
clean text laid out in lines: LINES (each paragraph on a line of its own,
`segmenter.gold.corpus.with_line_breaks`) and WRAPPED (the same, hard-wrapped,
`segmenter.gold.corpus.wrapped`). The segmenter judges every text CLEAN, CORRUPT or SPOKEN by its look
(`condition_for`, from the text's first LOOK_CHARS characters); a probe's meta keeps a threshold per
condition under these names.

Nothing here builds documents.
"""

from __future__ import annotations

import re

from segmenter.text.charclasses import PUNCTUATED_TEXT_MARKS
from segmenter.text.line_headers import header_share, without_headers
from segmenter.text.speech import filler_count

CLEAN = "clean"
CORRUPT = "corrupt"
SPOKEN = "spoken"  # CORRUPT text that reads as speech: read as CORRUPT, decoded with its own threshold
LINES = "lines"
WRAPPED = "wrapped"

TEXT_CONDITIONS = (CLEAN, CORRUPT)  # what a probe reads text as; the default for training
JUDGED_CONDITIONS = (CLEAN, CORRUPT, SPOKEN)  # what `condition_for` returns: each has its decoding
LAYOUTS = (LINES, WRAPPED)  # clean text laid out in lines, for probes that read line breaks
TRAINING_CONDITIONS = TEXT_CONDITIONS + LAYOUTS  # every condition training can lay documents out in

LOOK_CHARS = 1 << 16  # the text's first characters, which choose its condition (`condition_for`)
_PUNCTUATED_TEXT_MARK = re.compile(f"[{re.escape(PUNCTUATED_TEXT_MARKS)}]")
FILLERS_PER_WORD = 0.01  # one filler in a hundred words makes unpunctuated text spoken
HEADED_LINES = 0.5  # or a speaker label or timestamp opening half of its lines


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


def looks_spoken(text: str) -> bool:
    """True when `text` reads as a transcript of speech: at least FILLERS_PER_WORD fillers ("um",
    "uh", "hmm": `segmenter.text.speech`) per word, or a header (`segmenter.text.line_headers`)
    opening at least HEADED_LINES of its non-blank lines. Only asked of unpunctuated text (`condition_for`).

    >>> looks_spoken("so um we left early and uh that was it"), looks_spoken("so we left early")
    (True, False)
    >>> looks_spoken("A: so we left\\nB: yeah"), looks_spoken("the summer of 1997 was hot")
    (True, False)
    """
    words = len(text.split())
    if words and filler_count(text) >= FILLERS_PER_WORD * words:
        return True
    return header_share(text) >= HEADED_LINES


def condition_for(text: str) -> str:
    """ "corrupt" (read with the unpunctuated threshold) if the first LOOK_CHARS characters of `text`
    have no case or punctuation, "spoken" if they are also `looks_spoken`, else "clean". A streamed text
    is judged by its start too, so a text gets the same threshold whether it is segmented whole or
    streamed."""
    head = text[:LOOK_CHARS]
    if not looks_unpunctuated(head):
        return CLEAN
    return SPOKEN if looks_spoken(head) else CORRUPT
