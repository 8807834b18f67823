"""Read one text that arrives in pieces (a large file read incrementally) in bounded memory.

`TextStream` takes the text chunk by chunk, however it was cut, and hands its candidate boundaries to a
sink as soon as they are final. Inside, the text is re-cut into pieces of at most `PIECE_CHARS`
characters that end right before a whitespace run (so tokenizing a piece gives the same tokens as
tokenizing the whole text: every whitespace character separates words, the encoder handing those the
tokenizer would delete to it as spaces; characters it does delete, such as a zero-width space, join
the words around them and are never cut before), windows are planned exactly as
`segmenter.readers.windows.plan` plans them for the whole token sequence and run in the same batches,
and each gap's score is averaged once every window covering it has run. Windows come from
`segmenter.readers.windows.WindowPlanner` and are averaged by `segmenter.readers.windows.GapAverager`,
scored by the shared `segmenter.readers.gap_scorer.GapScorer`. Nothing depends on where the chunks
were cut, so a text read in one piece and the same text streamed give identical candidates.

The sink is the `segmenter.decode.decoder.Decoder` of a reading, or a
`segmenter.readers.candidates.CandidateBuffer` where several readers are averaged
(`segmenter.readers.tree`). Memory holds the current piece, one batch of windows and the text since
the last final boundary. Reading files and writing output live in `segmenter.io` and the CLI.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from segmenter.config import FeatureConfig
from segmenter.decode.decoder import Span, blank_line_boundaries
from segmenter.readers.candidates import CandidateSink, candidates
from segmenter.readers.gap_scorer import GapScorer
from segmenter.readers.windows import GapAverager, Window, WindowPlanner
from segmenter.text.charclasses import deleted_by_tokenizer
from segmenter.text.line_features import TEXT_START, line_state_after
from segmenter.text.surface import flag_count
from segmenter.text.tokens import Tokens

PIECE_CHARS = 1 << 16  # characters tokenized at a time


# Last run start in a piece: a non-whitespace character followed by whitespace (greedy: the last one).
_LAST_RUN_START = re.compile(r".*\S(?=\s)", re.DOTALL)
_NON_SPACE = re.compile(r"\S")


def cut_point(text: str, start: int = 0, limit: int = PIECE_CHARS) -> int | None:
    """End (an index into `text`) of the next piece of text[start:]: right before the last whitespace
    run that starts within `limit` characters of the piece's first non-whitespace character; `limit`
    characters after that first character when there is none (a very long word, or words joined by
    deleted characters such as zero-width spaces); None when the text seen so far is too short to decide.

    >>> cut_point("ab cd ef", limit=6), cut_point("abcdefgh", limit=4), cut_point("     ab cd", limit=2)
    (5, 4, 7)
    >>> cut_point("\\x0c\\x0cabc d", limit=4)  # not 4, inside "abc"
    5
    """
    first = _NON_SPACE.search(text, start)
    if first is None:
        return None  # only whitespace so far: a blank-line run must not be cut
    end = first.start() + limit  # leading whitespace does not count: a cut never lands in the next word early
    if len(text) < end:
        return None
    match = _LAST_RUN_START.match(text, start, end)
    return end if match is None else match.end()


class TextStream:
    """One reader's candidates for one text fed in chunks: `feed(chunk)` and `close()` hand the text
    and the final candidates to `sink` and yield the spans it makes (a `Decoder` makes spans; a
    buffer makes none), with offsets into the whole text (the concatenation of the chunks).

    scorer:     the gap scorer (tokens, encoder windows, probabilities), shared with every entry point.
    batch_size: windows per encoder batch.
    sink:       where the text pieces and the final candidates go.
    """

    def __init__(self, scorer: GapScorer, batch_size: int, sink: CandidateSink):
        self.scorer = scorer
        self.batch_size = batch_size
        self.sink = sink
        self._chunks: list[str] = []  # text not yet tokenized, from global offset self._pending_base on
        self._pending_len = 0
        self._next_attempt = PIECE_CHARS  # pending length at which to look for the next cut
        self._pending_base = 0
        self._previous_char = " "  # the last character of the text so far that the tokenizer keeps
        # token buffer: tokens from global index self._tok_base on, with global character offsets
        self._tokens = _empty_tokens(self.scorer.features)
        self._line_state = TEXT_START  # what the text so far leaves open for the line features
        self._tok_base = 0
        self._planner = WindowPlanner(self.scorer.window)  # windows in global token indices
        self._averager = GapAverager()  # gap i lies after global token i
        self._final = 0  # gaps before this global index have their final score
        self._queued: list[Window] = []  # planned windows not yet run

    # -- public ---------------------------------------------------------------------------------------

    def feed(self, chunk: str) -> Iterator[Span]:
        """Take the next chunk of text; yield the spans that became final."""
        if not isinstance(chunk, str):
            raise TypeError(f"text chunks must be str, got {type(chunk).__name__}")
        if not chunk:
            return
        self._chunks.append(chunk)
        self._pending_len += len(chunk)
        if self._pending_len < self._next_attempt:  # no cut is possible yet: do not join small chunks
            return
        pending, start = "".join(self._chunks), 0
        while (cut := cut_point(pending, start, PIECE_CHARS)) is not None:
            self._add_piece(pending[start:cut])
            start = cut
            yield from self._run(final=False)
        rest = pending[start:]
        self._chunks, self._pending_len = [rest], len(rest)
        # Cuts depend on the text only, so trying again later finds the same one; a long run of
        # whitespace waits until the pending text has doubled (linear work however it is fed).
        self._next_attempt = max(PIECE_CHARS, 2 * len(rest))

    def close(self) -> Iterator[Span]:
        """End of text: yield the remaining spans."""
        rest = "".join(self._chunks)
        self._chunks, self._pending_len = [], 0
        if rest:
            self._add_piece(rest)
        yield from self._run(final=True)
        self._finalise(self._n_tokens)
        yield from self.sink.finish()

    # -- text and tokens ------------------------------------------------------------------------------

    @property
    def _n_tokens(self) -> int:
        return self._tok_base + len(self._tokens)

    def _add_piece(self, piece: str) -> None:
        base = self._pending_base
        self._pending_base += len(piece)
        self.sink.add_text(piece, [base + offset for offset in blank_line_boundaries(piece)])
        new = self.scorer.tokenize(piece, self._line_state)
        if self.scorer.features.lines:
            self._line_state = line_state_after(piece, new.offsets, self._line_state)
        # glued: the piece's first kept character continues the word the previous piece ended with
        first = _first_kept(piece)
        glued = (
            base > 0
            and first != ""
            and not _is_separator(first)
            and not _is_separator(self._previous_char)
            and self.scorer.encoder.joins(self._previous_char, first)
        )
        self._previous_char = _first_kept(reversed(piece)) or self._previous_char
        if len(new) == 0:
            return
        if glued:  # a hard cut inside a very long word is no candidate boundary
            new = Tokens(new.ids, new.offsets, np.concatenate([[False], new.word_start[1:]]), new.surface)
        old = self._tokens
        surface = None if old.surface is None else np.concatenate([old.surface, new.surface])
        self._tokens = Tokens(
            ids=np.concatenate([old.ids, new.ids]),
            offsets=np.concatenate([old.offsets, new.offsets + base]),
            word_start=np.concatenate([old.word_start, new.word_start]),
            surface=surface,
        )
        self._averager.grow(self._n_tokens)

    # -- windows --------------------------------------------------------------------------------------

    def _run(self, final: bool) -> Iterator[Span]:
        """Run every full batch of queued windows (every batch when `final`), then emit final spans."""
        planned = self._planner.advance(self._n_tokens, final)
        self._queued.extend(w for w in planned if len(w) >= 2)
        size = self.batch_size
        while len(self._queued) >= size or (final and self._queued):
            batch, self._queued = self._queued[:size], self._queued[size:]
            self._score(batch)
            if not final:
                upcoming = self._queued[0].start if self._queued else self._n_tokens
                self._finalise(min(upcoming, self._planner.first_start(self._n_tokens)))
        if not final:
            yield from self.sink.advance(self._known_upto())

    def _score(self, batch: list[Window]) -> None:
        """Run one batch and add its gap scores into the running averages."""
        base = self._tok_base
        local = [Window(0, w.start - base, w.end - base) for w in batch]
        for window, scores in zip(batch, self.scorer.score([self._tokens], local), strict=True):
            self._averager.add(window, scores)  # scores: (len(window) - 1,)

    def _finalise(self, frontier: int) -> None:
        """Hand the sink every candidate before global token index `frontier` (no later window covers
        them), then drop the tokens and gaps no window needs any more."""
        frontier = min(frontier, max(self._n_tokens - 1, 0))
        base = self._tok_base
        lo, hi = self._final - base, frontier - base
        if hi > lo:
            probs = self._averager.averages(self._final, frontier)  # (hi - lo,)
            found = candidates(self._tokens.offsets[lo : hi + 1], self._tokens.word_start[lo : hi + 1], probs)
            self.sink.add_candidates(found.offsets, found.probs)
            self._final = frontier
        self._trim(self._final)  # every window still to run starts at or after the final gaps

    def _known_upto(self) -> int:
        """Every candidate before this character offset has been handed to the sink."""
        following = self._final + 1 - self._tok_base  # the next candidate's token, in the buffer
        if following < len(self._tokens):
            return int(self._tokens.offsets[following, 0])
        return self._pending_base

    def _trim(self, keep_from: int) -> None:
        """Drop buffered tokens (and their gaps) before global token index `keep_from`."""
        drop = keep_from - self._tok_base
        if drop <= 0 or drop < len(self._tokens) // 2:
            return
        t = self._tokens
        self._tokens = Tokens(
            ids=t.ids[drop:],
            offsets=t.offsets[drop:],
            word_start=t.word_start[drop:],
            surface=None if t.surface is None else t.surface[drop:],
        )
        self._averager.trim(keep_from)
        self._tok_base = keep_from


def _empty_tokens(features: FeatureConfig) -> Tokens:
    return Tokens(
        ids=np.zeros(0, dtype=np.int64),
        offsets=np.zeros((0, 2), dtype=np.int64),
        word_start=np.zeros(0, dtype=bool),
        surface=np.zeros((0, flag_count(features.lines)), dtype=np.float32) if features.surface else None,
    )


def _first_kept(chars: Iterable[str]) -> str:
    """The first of `chars` that the tokenizer does not delete ("" if none)."""
    return next((char for char in chars if not deleted_by_tokenizer(char)), "")


def _is_separator(char: str) -> bool:
    """Whether `char` is whitespace, which the tokenizer splits words at."""
    return char.isspace()
