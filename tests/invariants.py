"""The span invariants every entry point promises, as one reusable assertion."""

from __future__ import annotations


def assert_invariants(text: str, spans) -> None:
    """Spans are ordered, non-overlapping, non-empty, stripped slices of `text` covering every
    non-whitespace character exactly once."""
    covered = [0] * len(text)
    previous_end = 0
    for span in spans:
        assert span.text == text[span.start : span.end]
        assert span.start < span.end, "empty span"
        assert span.start >= previous_end, "spans overlap or are out of order"
        assert not span.text[0].isspace() and not span.text[-1].isspace(), "span has edge whitespace"
        for i in range(span.start, span.end):
            covered[i] += 1
        previous_end = span.end
    lost = [i for i, char in enumerate(text) if not char.isspace() and covered[i] != 1]
    assert not lost, f"characters not covered exactly once: {lost[:10]}"


def assert_same_spans(got, expected, tolerance: float = 2e-3) -> None:
    """The same spans (offsets and text) with scores equal up to float rounding: what two readings of
    one text give when their windows were batched differently (docs/decoding.md)."""
    assert [(s.start, s.end, s.text) for s in got] == [(s.start, s.end, s.text) for s in expected]
    for mine, theirs in zip(got, expected, strict=True):
        assert abs(mine.score - theirs.score) <= tolerance, (mine, theirs)
