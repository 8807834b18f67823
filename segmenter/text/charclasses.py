"""The text's character classes in one place: which characters end a sentence, close a quote, break a
line, or vanish in the tokenizer, for every module that asks.

Each class is named for the rule that reads it. Several rules read related but different sets (the
probes' surface flags were fixed when the shipped probes were trained; the gold-data corruption knows
more sentence marks than the flags do); those stay separate sets here, each saying what reads it, so a
change to one rule never moves another. Every set is a `str` of its characters (the comment spells
them out); membership is asked of one character at a time. Predicates cover the classes that are more
than a list of characters (Unicode categories).

This module only classifies characters; it knows nothing of tokens, models or boundaries.
"""

from __future__ import annotations

import unicodedata

# -- sentence-final punctuation -------------------------------------------------------------------------

# Gold data (`segmenter.gold.corpus`): a boundary is marked when one of these precedes it (closing marks
# between allowed), and `without_final_punctuation` strips them.
SENTENCE_FINAL = ".!?\u2026\u203c\u2047\u2048\u2049\u3002\uff01\uff1f"  # . ! ? … ‼ ⁇ ⁈ ⁉ 。！？

# A text holding none of these (and no upper-case letter) is read as unpunctuated and gets the
# unpunctuated threshold (`segmenter.text.conditions.looks_unpunctuated`).
PUNCTUATED_TEXT_MARKS = ".!?\u2026\u3002\uff01\uff1f"  # . ! ? … 。！？

# The silver-sentence rule for raw training text (`segmenter.training.data.rule_sentences`): a sentence
# ends after one of RULE_SENTENCE_FINAL, then any RULE_CLOSING, before a word that may open with one of
# RULE_OPENING.
RULE_SENTENCE_FINAL = ".!?\u2026"  # . ! ? …
RULE_CLOSING = "\"'\u201d\u2019)]"  # " ' ” ’ ) ]
RULE_OPENING = "\"'\u201c\u2018(["  # " ' “ ‘ ( [

# -- closing quotes and brackets ------------------------------------------------------------------------

# Gold data (`segmenter.gold.corpus.is_marked`): may stand between sentence-final punctuation and a boundary.
CLOSING = "\"')]}\u00bb\u201d\u2019\u203a"  # " ' ) ] } » ” ’ ›

# The decoder's placement of quotes and brackets (`segmenter.decode.quotes`): one of QUOTE_OPENERS after
# whitespace and touching the next character opens what follows; one of QUOTE_CLOSERS touching the
# character before it and followed by whitespace closes what precedes it.
QUOTE_OPENERS = "\"'\u201c\u2018([{\u00ab"  # " ' “ ‘ ( [ { «
QUOTE_CLOSERS = "\"'\u201d\u2019)]}\u00bb"  # " ' ” ’ ) ] } »

# -- lines of a list (`segmenter.decode.line_rules`) ----------------------------------------------------

# A short line ending in one of these is a sentence, not an item of a list after a colon.
LIST_ITEM_NOT_FINAL = ".!?\u2026"  # . ! ? …

# -- the probes' surface flags (`segmenter.text.surface.FLAGS`) ----------------------------------------------
# Baked into every shipped probe: a probe reads these flags as it was trained on them, so these sets
# change only with retrained probes.
SURFACE_SENTENCE_PUNCT = ".!?\u2026"  # flag `sentence_punct`: . ! ? …, or three SURFACE_ELLIPSIS_DOTS
SURFACE_ELLIPSIS_DOTS = "."  # flag `sentence_punct`, too, for a token of three of these: "..."
SURFACE_CLOSING_PUNCT = "\"')]}\u201d\u2019\u00bb"  # flag `closing_punct`: " ' ) ] } ” ’ »
SURFACE_COMMA_LIKE = ",;:"  # flag `comma_like`: , ; :

# -- marks that never make a segment of their own (`segmenter.decode.decoder`) --------------------------

# Sentence and clause punctuation, with their full-width and Arabic forms: . ! ? , ; : ' " … ‥
# 。 ． ！ ？ ， ； ： 、 ؟ ، ؛
QUIET_MARKS = ".!?,;:'\"\u2026\u2025\u3002\uff0e\uff01\uff1f\uff0c\uff1b\uff1a\u3001\u061f\u060c\u061b"
QUIET_CATEGORIES = ("Ps", "Pe", "Pi", "Pf")  # brackets and quotes: open, close, initial, final


def is_quiet_mark(char: str) -> bool:
    """Whether `char` is a quote, a bracket or sentence punctuation (QUIET_MARKS, QUIET_CATEGORIES): a
    run of such marks never stands as a segment of its own.

    >>> is_quiet_mark("\\u201c"), is_quiet_mark("\\uff1f"), is_quiet_mark("=")
    (True, True, False)
    """
    return char in QUIET_MARKS or unicodedata.category(char) in QUIET_CATEGORIES


def is_punctuation(char: str) -> bool:
    """True for every Unicode punctuation character (categories Pc, Pd, Pe, Pf, Pi, Po, Ps): what
    `segmenter.gold.corpus.corrupt` deletes."""
    return unicodedata.category(char).startswith("P")


# -- enumerated lists (`segmenter.decode.lists`) --------------------------------------------------------

LIST_BULLETS = "\u2022\u25e6\u25aa\u25ab\u2023\u2043\u2219\u00b7*\u2013-"  # • ◦ ▪ ▫ ‣ ⁃ ∙ · * – -
MARKER_LINE_BREAKS = "\n\r"  # a list marker after whitespace holding one of these opens a line

# -- line breaks ----------------------------------------------------------------------------------------

# `str.splitlines()`'s set (\r\n is one break): the line features read it, the decoder's blank-line
# rule counts it, the CLI's `lines` output folds it.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # \n \r \v \f \x1c \x1d \x1e \x85 \u2028 \u2029

# -- what BERT's tokenizer deletes ----------------------------------------------------------------------

# Whitespace that BERT's normaliser deletes as control characters (category Cc) instead of splitting
# words at it, which would glue "bread\x85\x85then" into one word; the encoder hands each to the
# tokenizer as a space (one character for one, so offsets stay exact). Every whitespace character of
# category Cc except \t \n \r.
TOKENIZER_DELETED_SPACE = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"  # \v \f \x1c \x1d \x1e \x1f \x85

# Characters the normaliser deletes besides the control and format characters that are not whitespace.
TOKENIZER_DELETED = "\x00\ufffd"  # NUL, U+FFFD
TOKENIZER_DELETED_CATEGORIES = ("Cc", "Cf")  # control, format


def deleted_by_tokenizer(char: str) -> bool:
    """Whether BERT's normaliser deletes `char`: NUL, U+FFFD and control and format characters that are
    not whitespace (it joins the characters around them; the whitespace among them reaches it as
    spaces, see TOKENIZER_DELETED_SPACE).

    >>> deleted_by_tokenizer("\\u200b"), deleted_by_tokenizer("\\x85"), deleted_by_tokenizer("a")
    (True, False, False)
    """
    return char in TOKENIZER_DELETED or (
        not char.isspace() and unicodedata.category(char) in TOKENIZER_DELETED_CATEGORIES
    )


# what may follow an emoji's symbol: joiner, variation selectors, keycap, skin tones (`segmenter.decode`)
EMOJI_MODIFIERS = "\u200d\ufe0e\ufe0f\u20e3\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff"
