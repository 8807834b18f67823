"""Turn per-gap boundary probabilities into spans of the caller's text.

Input: the text, the character offset of every candidate boundary (the first character after a gap)
and its probability. Output: `Span`s that satisfy the invariants every caller relies on:

- `span.text == text[span.start:span.end]`; spans are in order, non-overlapping and non-empty;
- no span starts or ends with whitespace, and every non-whitespace character lies in exactly one span.

Rules, in order: a boundary the model proposes right after the marker of an enumerated list's item
("... item 2.) | The second item") moves to the marker's start, and in an enumeration that opens the text, a
line or follows a colon every later item opens a segment (see `segmenter.decode.lists`); a bulleted line of a
list, a rule line ("--") and the line after a rule line open segments (`segmenter.decode.line_rules`); a
boundary right after the ">" markers that open a quoted line moves to the first marker; a
boundary the model puts right after an opening quote or bracket moves before it, and one right before a
closing quote or bracket moves past it and the whitespace after it (`segmenter.decode.quotes`), and one right
after a filler ("um") moves before it (`segmenter.text.speech`); a gap at or
above the threshold is a boundary unless it falls inside a unit (an address, a number, a path, an emoji
sequence...: `segmenter.decode.units`), inside an entry of a reference list (`segmenter.decode.references`:
each entry opens a segment) or a markdown block that is never cut (a code block, a table row:
`segmenter.decode.markdown`); a markdown block's start (`segmenter.decode.layout`) and a blank line (a
whitespace run holding two or more line breaks) always are; of
two boundaries with no letter or digit between them only one stays, the one after whitespace if just one of
them is, else the more probable one (so a lone quote or bracket never becomes a segment, and a quote goes with
the sentence it belongs to), unless what lies between them is a run of symbols such as "=====" that stands as
a segment of its own; with `max_chars`, a longer segment is split at its most probable candidate gaps. This
module never reads the model.

`Decoder` applies these rules incrementally, to a text that arrives in pieces with its candidates, and
emits each span as soon as no later input can change it; `decode` runs it on a whole text at once, so
a text decoded in one piece or streamed gives the same spans.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from segmenter.config import DecodeConfig
from segmenter.decode import addresses, line_rules, lists, quotes, references, units
from segmenter.decode.layout import LayoutScanner
from segmenter.decode.markdown import Blocks
from segmenter.text import speech
from segmenter.text.breaks import LINE_BREAKS, count_line_breaks

FORCED = 2.0  # sorting key above any probability: forced boundaries (blank lines, rules) always win
SYMBOL_RUN_MAX = 64  # longest stretch without letters or digits checked for a run of symbols
# text kept before the open segment's start: what a list marker, an address or a line rule reads
_LOOKBEHIND = max(
    lists.LOOKBEHIND, addresses.RUN_MAX, line_rules.READ_MAX, units.RUN_MAX, references.READ_MAX
)
_WHITESPACE_RUN = re.compile(r"\s+")
QUOTE_PREFIX_MAX = 32  # characters of ">" markers and spaces read before a candidate
FILLER_RUN_MAX = 24  # characters of fillers ("um uh ") read before a candidate
_QUOTE_PREFIX = re.compile(r"(?:^|[\n\r])[ \t]*(>[ \t>]*)$")
_NON_SPACE = re.compile(r"\S")
# from a line of quote markers alone: the following lines of markers alone, up to the first marker of a
# quoted line that says something (group 1 spans the lines skipped)
_SAID_AFTER_MARKERS = re.compile(r"((?:>[ \t>]*(?:\r\n|[\n\r])[ \t]*){1,8})>[ \t>]*[^\s>]")
_MARKERS_ALONE = re.compile(r">[ \t>]*(?:\r\n|[\n\r]|$)")  # a line of quote markers alone


@dataclass(frozen=True)
class Span:
    """One segment: `text[start:end]`.

    score: probability of the boundary that opens this span (1.0 for the first span and for spans
    opened by a blank line, a list item or a line rule).
    """

    start: int
    end: int
    text: str
    score: float = 1.0


def blank_line_boundaries(text: str) -> list[int]:
    """Offsets just after every whitespace run that holds two or more line breaks: any that
    `str.splitlines` knows (`segmenter.text.breaks.LINE_BREAKS`: also NEL, form feed, U+2028...).

    CRLF counts as one line break; a lone CR counts as one.

    >>> blank_line_boundaries("a\\n\\nb\\r\\n \\r\\nc\\nd\\x85\\x85e")
    [3, 9, 14]
    """
    found = []
    for match in _WHITESPACE_RUN.finditer(text):
        run = match.group()
        if len(run) >= 2 and match.end() < len(text) and count_line_breaks(run) >= 2:
            found.append(match.end())
    return found


def decode(text: str, offsets: np.ndarray, probs: np.ndarray, config: DecodeConfig) -> list[Span]:
    """Spans of `text` from candidate boundary `offsets` (G,) and their probabilities `probs` (G,)."""
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1)
    probs = np.asarray(probs, dtype=np.float64).reshape(-1)
    order = np.argsort(offsets, kind="stable")
    decoder = Decoder(config)
    decoder.add_text(text, blank_line_boundaries(text))
    decoder.add_candidates(offsets[order], probs[order])
    return list(decoder.finish())


class Decoder:
    """The decoding rules applied to a stream: text pieces and candidates in, final spans out.

    Feed, in any interleaving: `add_text(piece, forced)` with consecutive pieces of the text and the
    blank-line boundaries inside them (global offsets), and `add_candidates(offsets, probs)` with
    candidates in increasing offset order. `advance(upto)` says every candidate before offset `upto`
    has been given and yields the spans that are now final; `finish()` ends the text. `config` may be
    replaced until the first `advance`. Memory holds only the text and candidates after the last final
    boundary.
    """

    def __init__(self, config: DecodeConfig):
        self.config = config
        self._text = ""  # the text from global offset self._base on
        self._base = 0
        self._forced: list[int] = []  # blank-line boundaries not yet processed, increasing
        self._cand_offsets: list[np.ndarray] = []  # candidates after the open segment's start
        self._cand_probs: list[np.ndarray] = []
        # probabilities the rules set for stored candidates (offset -> probability), written into the
        # stored arrays when they are next merged (`_merged_candidates`): one rule's change costs O(1)
        self._prob_updates: dict[int, float] = {}
        self._queue: list[tuple[int, float]] = []  # candidates not yet processed
        # suppression state (see `_suppress`): the last kept boundary that a later one may still displace
        self._last: tuple[int, float] | None = None
        self._alnum = False  # whether text[last : scanned] holds a letter or digit
        self._scanned = 0
        self._edge = 0  # start of the open segment: the last boundary that nothing can remove
        self._edge_score = 1.0
        self._pending_segments: list[tuple[int, float, int]] = []  # final, not yet turned into spans
        # list markers (see `_move_list_boundaries`): the text's first character, once found, and the
        # last marker seen, with its offset
        self._first_site: int | None = None
        self._last_marker: tuple[lists.Marker, int, bool] | None = None  # marker, offset, anchored
        self._marker_scan = 0  # markers before this offset have been looked for
        self._first_scan = 0  # the text before this offset is whitespace
        # markdown blocks (`segmenter.decode.layout`): their starts join self._forced; no boundary falls
        # strictly inside an atomic stretch (start, end), kept in order of start until the edge passes it
        self._layout = LayoutScanner(config.layout)
        self._atomic: list[tuple[int, int]] = []
        self._content_start: int | None = None  # the text's first non-space character, once a block asks
        # units no boundary falls inside (`segmenter.decode.units`), found by one scan up to _unit_scan
        self._units: list[tuple[int, int]] = []
        self._unit_scan = 0

    @property
    def _end(self) -> int:
        return self._base + len(self._text)

    def add_text(self, piece: str, forced: list[int] = ()) -> None:
        """Append the next piece of text; `forced`: blank-line boundaries inside it (global offsets)."""
        self._text += piece
        self._forced.extend(forced)
        self._add_blocks(self._layout.add(piece))

    def add_candidates(self, offsets: np.ndarray, probs: np.ndarray) -> None:
        """Append candidates (G,) offsets and (G,) probabilities, after every candidate given before."""
        if len(offsets) == 0:
            return
        self._cand_offsets.append(np.asarray(offsets, dtype=np.int64))
        self._cand_probs.append(np.array(probs, dtype=np.float64))  # a copy: the rules' updates change it
        self._queue.extend(zip(offsets.tolist(), probs.tolist(), strict=True))

    def advance(self, upto: int) -> Iterator[Span]:
        """Spans that are final once every candidate before `upto` is known."""
        self._process(upto)
        yield from self._flush()

    def finish(self) -> Iterator[Span]:
        """The remaining spans, at the end of the text."""
        end = self._end
        self._add_blocks(self._layout.finish())
        self._process(end, final=True)
        if (
            self._last is not None
            and self._last[1] < FORCED
            and not self._alnum
            and not _has_alnum(self._slice(self._scanned, end))
            and not self._symbol_run(self._last[0], end)
        ):
            self._last = None  # nothing but punctuation after it: a lone quote or bracket never is a segment
        if self._last is not None:
            self._commit(*self._last)
            self._last = None
        self._commit(end, 1.0)  # the text's end closes the open segment
        yield from self._flush()

    # -- internals ----------------------------------------------------------------------------------

    def _slice(self, start: int, end: int) -> str:
        return self._text[start - self._base : end - self._base]

    def _process(self, upto: int, final: bool = False) -> None:
        """Apply list markers, threshold and suppression to every event (candidate or blank line)
        before `upto`; unless `final`, the last `lists.REACH` characters wait (a marker reads them)."""
        limit = upto if final else min(upto - lists.REACH, self._layout.known)
        pending: dict[int, float] = {}  # offset -> probability, increasing offsets
        for offset, prob in self._queue:
            pending[offset] = max(pending.get(offset, 0.0), prob)
        self._scan_units(limit)
        self._move_list_boundaries(pending, limit)
        self._open_line_segments(pending, limit)
        self._attach_quotes(pending, limit)
        self._attach_fillers(pending, limit)
        self._open_quoted_lines(pending, limit)
        events: dict[int, float] = {}
        keep_queue, keep_forced = [], []
        threshold = self.config.threshold
        for offset, prob in pending.items():
            if offset >= limit:
                keep_queue.append((offset, prob))
            elif prob >= threshold and offset > 0:
                at = offset - self._base
                if self._in_atomic(offset) or (
                    prob < FORCED
                    and (
                        _inside(self._units, offset)
                        or units.splits_grapheme(self._text, at)
                        or units.inside_header(self._text, at)
                        or addresses.introduced_address(self._text, at)
                        or references.inside_entry(self._text, at)
                        or quotes.after_lead_in(self._text, at)
                        or quotes.line_end_aside(self._text, at)
                    )
                ):
                    self._store_probability(offset, 0.0)  # nor may `max_chars` cut there
                else:
                    events[offset] = prob
        for offset in self._forced:
            if offset >= limit:
                keep_forced.append(offset)
            elif not self._in_atomic(offset):
                events[offset] = FORCED
        self._queue, self._forced = keep_queue, keep_forced
        for offset in sorted(events):
            self._suppress(offset, events[offset])

    def _add_blocks(self, blocks: Blocks) -> None:
        """Take the markdown blocks of a finished group: their starts are forced boundaries."""
        # a block at the text's start opens the first segment already: no boundary there
        if blocks.starts and self._content_start is None:  # found once
            first = _NON_SPACE.search(self._text) if self._base == 0 else None
            # trimmed text held content already: every start counts
            self._content_start = first.start() if first is not None else self._base - 1
        starts = [at for at in blocks.starts if at > self._content_start]
        if starts:
            self._forced = sorted({*self._forced, *starts})
        self._atomic.extend(blocks.atomic)

    def _in_atomic(self, offset: int) -> bool:
        """Whether `offset` lies strictly inside an atomic stretch (a code block, a table row...)."""
        return _inside(self._atomic, offset)

    def _scan_units(self, limit: int) -> None:
        """Find the units that start before `limit` (reading on to RUN_MAX characters after it)."""
        if limit <= self._unit_scan:
            return
        base = self._base
        start = max(self._unit_scan, base)
        stop = min(self._end, limit + units.RUN_MAX)
        found, resume = units.unit_spans(self._text, start - base, stop - base, limit - base)
        self._units.extend((base + a, base + b) for a, b in found)
        self._unit_scan = base + resume

    def _move_list_boundaries(self, pending: dict[int, float], limit: int) -> None:
        """A boundary right after a list item's marker moves to the marker's start (see `lists`);
        `pending` maps candidate offsets to probabilities and is changed in place, as are the stored
        candidates that `max_chars` reads. Reads the text's first character and each marker that starts
        at a candidate before `limit`, in order, each once."""
        base, stop = self._base, min(limit, self._end)
        found = lists.marker_starts(self._text, max(self._marker_scan, base, 1) - base, stop - base)
        sites = [base + at for at in found if base + at in pending]  # markers where a boundary can be
        self._marker_scan = max(self._marker_scan, stop)
        if self._first_site is None:
            first = self._first_kept_char(stop)
            if first is not None:
                self._first_site = first
                sites.insert(0, first)  # the first item of a list at the text's start has no candidate
        for site in sites:
            previous = self._last_marker
            if previous is not None and site < previous[1] + previous[0].length:
                continue  # inside the marker before it ("10." of "• 10.")
            marker = lists.marker_at(self._slice(max(site - 1, 0), site + lists.MARKER_MAX), min(site, 1))
            if marker is None:
                continue
            continues = (
                previous is not None
                and site - previous[1] <= lists.LOOKAHEAD
                and previous[0].is_followed_by(marker)
            )
            # whether this marker's enumeration began at the text's start, a line's start or a colon
            anchored = (
                previous[2]
                if continues
                else (
                    site == self._first_site
                    or lists.opens_line(self._slice(max(site - lists.LOOKBEHIND, 0), site))
                )
            )
            self._last_marker = (marker, site, anchored)
            in_list = (anchored or not marker.is_plain) and (
                continues or lists.next_item_follows(self._slice(site, site + lists.REACH), 0, marker)
            )
            if in_list and anchored and continues:
                self._open_item(pending, site)
            after = site + marker.length
            if not in_list or pending.get(after, 0.0) < self.config.threshold:
                continue
            if lists.marker_at(self._slice(after - 1, after + lists.MARKER_MAX), 1) is not None:
                continue  # an empty item ("1." then "2."): the boundary already opens the next item
            prob = pending.pop(after)
            self._store_probability(after, 0.0)
            if site in pending:
                pending[site] = max(pending[site], prob)
                self._store_probability(site, pending[site])
            # else: the text's first character, where no boundary can be

    def _open_item(self, pending: dict[int, float], site: int) -> None:
        """The marker at `site` continues an enumeration that opens the text, a line or follows a colon:
        its item opens a segment."""
        if site in pending:
            self._force(pending, site)

    def _open_line_segments(self, pending: dict[int, float], limit: int) -> None:
        """A candidate that starts a bulleted line, a rule line or the line after a rule line becomes a
        boundary (see `line_rules`); `pending` is changed in place, as are the stored candidates."""
        reach = line_rules.READ_MAX
        for offset in pending:
            if offset >= limit or offset <= 0 or not self._after_line_break(offset):
                continue
            before = self._slice(max(offset - reach, 0), offset)
            if line_rules.opens_segment(
                before, self._slice(offset, offset + reach), offset <= reach
            ) or references.opens_entry(self._text, offset - self._base):
                self._force(pending, offset)

    def _attach_quotes(self, pending: dict[int, float], limit: int) -> None:
        """A quote or bracket goes with the sentence it belongs to (see `quotes`): the probability of the
        gap right after an opening one moves to the gap before it, and that of the gap before a closing
        one to the first gap after the whitespace that follows it. Forced boundaries stay where they
        are; `pending` is changed in place, as are the stored candidates."""
        base, text = self._base, self._text
        for offset in [at for at in pending if 0 < at < limit]:
            if text[offset - base] in quotes.EMPHASIS or (
                offset > base and text[offset - base - 1] in quotes.EMPHASIS
            ):
                target = quotes.emphasis_target(text, offset - base)
                if target is not None and pending.get(offset, FORCED) < FORCED:
                    self._move_probability(pending, offset, target + base)
                continue
            if ord(text[offset - base]) >= 0x2000:  # an emoji closes the sentence before it
                target = quotes.after_emoji(text, offset - base)
                if target is not None and pending.get(offset, FORCED) < FORCED:
                    self._move_probability(pending, offset, target + base)
                continue
            if text[offset - base] not in quotes.QUOTES_AND_BRACKETS:
                continue  # most candidates: no quote or bracket to place
            prob = pending.get(offset)
            if prob is None or prob >= FORCED:
                continue  # moved away already, or forced
            if quotes.opens_next(text, offset - base):
                self._move_probability(pending, offset + 1, offset)
                continue
            after = quotes.after_closing(text, offset - base)
            if after is not None:
                self._move_probability(pending, offset, after + base)

    def _attach_fillers(self, pending: dict[int, float], limit: int) -> None:
        """Fillers ("um", "uh": `segmenter.text.speech`) go with what follows: the probability of a gap
        right after a run of them moves to the gap before the run; a run that ends its line stays with
        what precedes it (the gap before it loses its probability)."""
        base, text = self._base, self._text
        for offset in [at for at in pending if 0 < at < limit]:
            prob = pending.get(offset)
            if prob is None or prob >= FORCED or prob == 0.0:
                continue
            if text[offset - base] in "uUeEhHmM" and speech.FILLERS_TO_LINE_END.match(text, offset - base):
                if not self._after_line_break(offset):
                    pending[offset] = 0.0
                    self._store_probability(offset, 0.0)
                continue
            if text[offset - base - 2 : offset - base - 1] not in ("m", "h", "M", "H"):
                continue  # most candidates: no filler ("um", "uh", "hmm") ends right before them
            run = speech.FILLERS_BEFORE.search(text, max(offset - base - FILLER_RUN_MAX, 0), offset - base)
            if run is not None:
                self._move_probability(pending, offset, run.start(1) + base)

    def _open_quoted_lines(self, pending: dict[int, float], limit: int) -> None:
        """A boundary right after the ">" markers that open a quoted line ("> > | Just to clarify") moves
        to the line's first marker: a segment that opens a quoted line starts at its ">". One before a
        line of markers alone (">" between quoted paragraphs) moves to the next quoted line that says
        something, or goes when none follows: markers alone are never a segment's start."""
        for offset in [at for at in pending if 0 < at < limit]:
            if self._text[offset - self._base] == ">" and pending[offset] < FORCED:
                said = _SAID_AFTER_MARKERS.match(self._text, offset - self._base)
                if said is not None:
                    target = offset + said.end(1) - said.start(1)
                    if pending.get(target, 0.0) >= FORCED:  # the quoted line opens a segment already
                        pending[offset] = 0.0
                        self._store_probability(offset, 0.0)
                    elif target in pending:
                        self._move_probability(pending, offset, target)
                    continue
                if _MARKERS_ALONE.match(self._text, offset - self._base):
                    pending[offset] = 0.0
                    self._store_probability(offset, 0.0)
                    continue
            if self._text[offset - self._base - 1] not in " \t>":
                continue  # most candidates: not after a marker
            before = self._slice(max(offset - QUOTE_PREFIX_MAX, self._base), offset)
            found = _QUOTE_PREFIX.search(before)
            if found is None:
                continue
            target = offset - len(before) + found.start(1)
            if pending.get(target, 0.0) >= FORCED and pending[offset] < FORCED:
                pending[offset] = 0.0  # the line opens a segment already, at its first marker
                self._store_probability(offset, 0.0)
            else:
                self._move_probability(pending, offset, target)

    def _move_probability(self, pending: dict[int, float], source: int, target: int) -> None:
        """Move the probability of the candidate at `source` to the one at `target`, where both are
        candidates and neither is forced."""
        if source not in pending or target not in pending or max(pending[source], pending[target]) >= FORCED:
            return
        pending[target] = max(pending[target], pending[source])
        pending[source] = 0.0
        self._store_probability(target, pending[target])
        self._store_probability(source, 0.0)

    def _force(self, pending: dict[int, float], offset: int) -> None:
        """Make the candidate at `offset` a forced boundary, as a blank line is."""
        pending[offset] = FORCED
        self._store_probability(offset, FORCED)

    def _after_line_break(self, offset: int) -> bool:
        """Whether the whitespace right before `offset` holds a line break (read back to the first
        character that is not whitespace, or as far as the text is kept)."""
        at = offset - self._base - 1
        while at >= 0 and self._text[at].isspace():
            if self._text[at] in LINE_BREAKS:
                return True
            at -= 1
        return False

    def _store_probability(self, offset: int, prob: float) -> None:
        """Set the stored probability of the candidate at `offset` (what `max_chars` splits by)."""
        self._prob_updates[offset] = prob

    def _merged_candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """The stored candidates (some stored first) as one pair of arrays, increasing offsets, with the
        rules' probability updates written in."""
        offsets, probs = np.concatenate(self._cand_offsets), np.concatenate(self._cand_probs)
        for offset, prob in self._prob_updates.items():
            probs[np.searchsorted(offsets, offset, "left") : np.searchsorted(offsets, offset, "right")] = prob
        self._prob_updates.clear()
        self._cand_offsets, self._cand_probs = [offsets], [probs]
        return offsets, probs

    def _first_kept_char(self, stop: int) -> int | None:
        """Offset of the text's first non-whitespace character, if it lies before `stop`."""
        if self._base != 0 or stop <= self._first_scan:
            return None
        found = _NON_SPACE.search(self._text, self._first_scan, stop)
        self._first_scan = stop
        return None if found is None else found.start()

    def _suppress(self, offset: int, score: float) -> None:
        """Keep, of consecutive boundaries with no letter or digit between them, only one: the one after
        whitespace if just one of them is (`Iraq. | "I said` rather than `Iraq. " | I said`), else the
        most probable one.

        Forced boundaries (blank lines, list items, line rules) are always kept; a boundary with nothing
        alphanumeric before it at the start of the text is dropped unless forced. A run of symbols
        between them such as "=====" or "-- " is content: it stays a segment of its own (see
        `line_rules.stands_alone`). Each character is looked at once, except that a stretch without
        letters or digits of up to `SYMBOL_RUN_MAX` characters is read again to check it for a run of
        symbols.
        """
        self._alnum = self._alnum or _has_alnum(self._slice(self._scanned, offset))
        self._scanned = offset
        last = self._last
        content = self._alnum
        if not content:
            content = self._symbol_run(self._edge if last is None else last[0], offset)
        if score >= FORCED or content:
            if last is not None and (last[1] >= FORCED or content):
                self._commit(*last)  # nothing later can displace it any more
            # else: a forced boundary displaces a weaker one right before it
            self._last = (offset, score)
        elif last is not None and self._rank(*last) < self._rank(offset, score):
            self._last = (offset, score)
        else:
            return
        self._alnum = False

    def _symbol_run(self, start: int, end: int) -> bool:
        """Whether text[start:end], which holds no letter or digit, is a run of symbols that stands as a
        segment of its own; a stretch longer than SYMBOL_RUN_MAX is not read and does not count."""
        return end - start <= SYMBOL_RUN_MAX and line_rules.stands_alone(self._slice(start, end))

    def _rank(self, offset: int, score: float) -> tuple[bool, float]:
        """Order of preference between competing boundaries: after whitespace first, then probability."""
        return self._slice(offset - 1, offset).isspace(), score

    def _commit(self, offset: int, score: float) -> None:
        """`offset` is a boundary for good: the open segment ends there."""
        self._pending_segments.append((self._edge, self._edge_score, offset))
        self._edge, self._edge_score = offset, score

    def _flush(self) -> Iterator[Span]:
        segments, self._pending_segments = self._pending_segments, []
        for start, score, end in segments:
            yield from self._segment_spans(start, score, end)
        self._trim()

    def _segment_spans(self, start: int, score: float, end: int) -> Iterator[Span]:
        """Spans of the final segment text[start:end] (split further when longer than max_chars)."""
        edges = {start: score}
        if self.config.max_chars is not None and end - start > self.config.max_chars:
            offsets, probs = self._candidates_between(start, end)
            edges.update(_cap_length(start, end, offsets, probs, self.config.max_chars))
        points = sorted(edges)
        for a, b in zip(points, [*points[1:], end], strict=True):
            span = _strip(self._slice(a, b), a, min(edges[a], 1.0))
            if span is not None:
                yield span

    def _candidates_between(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        if not self._cand_offsets:
            return np.zeros(0, np.int64), np.zeros(0)
        offsets, probs = self._merged_candidates()
        inside = (offsets > start) & (offsets < end)
        return offsets[inside], probs[inside]

    def _trim(self) -> None:
        """Drop the text and candidates before the open segment's start (keeping the characters a list
        marker, an address check or a line rule after it may read)."""
        self._atomic = [(start, end) for start, end in self._atomic if end > self._edge]
        self._units = [(start, end) for start, end in self._units if end > self._edge]
        cut = min(self._edge, self._scanned) - _LOOKBEHIND
        if cut - self._base > max(len(self._text) // 2, 1024):
            self._text = self._text[cut - self._base :]
            self._base = cut
        if len(self._cand_offsets) > 64 or (self._cand_offsets and self._cand_offsets[0][0] < self._edge):
            offsets, probs = self._merged_candidates()
            keep = offsets > self._edge
            # an empty array is never stored: the check above reads the first stored offset
            kept = keep.any()
            self._cand_offsets, self._cand_probs = ([offsets[keep]], [probs[keep]]) if kept else ([], [])


def _inside(stretches: list[tuple[int, int]], offset: int) -> bool:
    """Whether `offset` lies strictly inside one of `stretches` (in order of start)."""
    at = bisect.bisect_left(stretches, (offset,))
    return any(start < offset < end for start, end in stretches[max(at - 4, 0) : at])


def _has_alnum(text: str) -> bool:
    return any(map(str.isalnum, text))


def _strip(piece: str, start: int, score: float) -> Span | None:
    """The span of `piece` (which starts at global offset `start`) without surrounding whitespace."""
    stripped = piece.strip()
    if not stripped:
        return None
    lead = len(piece) - len(piece.lstrip())
    return Span(start + lead, start + lead + len(stripped), stripped, score)


def _cap_length(
    start: int, end: int, offsets: np.ndarray, probs: np.ndarray, max_chars: int
) -> dict[int, float]:
    """Cuts splitting the segment [start, end) into pieces of at most max_chars, each at the most
    probable candidate gap inside the piece being split (ties: the earlier candidate); `offsets` (G,)
    increasing, all inside the segment."""
    cuts: dict[int, float] = {}
    if len(offsets) == 0:
        return cuts
    rank = np.empty(len(probs), dtype=np.int64)  # 0 = most probable; ties: the earlier candidate
    rank[np.argsort(-probs, kind="stable")] = np.arange(len(probs))
    best = _RangeArgmin(rank)
    pending = [(start, end)]
    while pending:
        a, b = pending.pop()
        if b - a <= max_chars:
            continue
        lo = int(np.searchsorted(offsets, a, side="right"))  # candidates with a < offset < b
        hi = int(np.searchsorted(offsets, b, side="left"))
        if lo >= hi:
            continue  # no candidate gap (one long word): leave it whole
        i = best(lo, hi)
        cut = int(offsets[i])
        cuts[cut] = float(probs[i])
        pending += [(a, cut), (cut, b)]
    return cuts


class _RangeArgmin:
    """Position of the smallest value in values[lo:hi], in O(1) after O(n log n) set-up (sparse table),
    so that capping a long text costs n log n instead of n^2."""

    def __init__(self, values: np.ndarray):
        self.values = values
        self.levels = [np.arange(len(values))]  # levels[k][i]: argmin of values[i : i + 2**k]
        while 2 ** len(self.levels) <= len(values):
            prev, half = self.levels[-1], 2 ** (len(self.levels) - 1)
            left, right = prev[:-half], prev[half:]
            self.levels.append(np.where(values[left] <= values[right], left, right))

    def __call__(self, lo: int, hi: int) -> int:
        k = (hi - lo).bit_length() - 1
        left, right = self.levels[k][lo], self.levels[k][hi - 2**k]
        return int(left if self.values[left] <= self.values[right] else right)
