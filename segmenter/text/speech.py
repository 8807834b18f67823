"""Words that only speech has: hesitations and backchannel sounds ("um", "uhh", "erm", "hmm", "mhm").

Two readers: the text conditions count them to tell a transcript from other unpunctuated text
(`segmenter.text.conditions.looks_spoken`), and the decoder keeps them with what follows at a
boundary, as an editor punctuating a transcript does (`segmenter.decode.decoder`).

This module only reads text.
"""

from __future__ import annotations

import re

FILLER = r"(?:u+[mh]+|e+r+m+|h+m+|m+h*m+|uh-huh)"  # one filler word, any case
FILLERS = re.compile(rf"\b{FILLER}\b", re.IGNORECASE)
# a run of fillers that ends right before an offset ("that um uh |conceptual"): group 1 is the run
FILLERS_BEFORE = re.compile(rf"(?<![\w'-])((?:{FILLER},?[ \t]+)+)$", re.IGNORECASE)
# a run of fillers that ends its line ("too um\n"), read from a candidate on
FILLERS_TO_LINE_END = re.compile(rf"(?:{FILLER}[ \t,]*)+(?:\r\n|[\n\r]|$)", re.IGNORECASE)


def filler_count(text: str) -> int:
    """The filler words in `text`.

    >>> filler_count("so um we uh left, hmm. Umm, the mum was there")
    4
    """
    return len(FILLERS.findall(text))
