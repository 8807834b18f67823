"""No boundary falls inside a unit (segmenter.decode.units), whatever the model proposes: a property test
per kind, decoding with every gap a candidate at probability 1.0."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from segmenter.config import DecodeConfig
from segmenter.decode.decoder import decode
from segmenter.decode.units import inside_unit

LETTERS = "abcdefghijklmnopqrstuvwxyz"
word = st.text(LETTERS, min_size=1, max_size=8)
digits = st.integers(0, 9999).map(str)


def _every_gap(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Every position after the first that starts a word or a punctuation mark: what a tokenizer that
    splits at punctuation offers as candidates."""
    offsets = [m.start() for m in re.finditer(r"\w+|[^\w\s]", text) if m.start() > 0]
    return np.array(offsets, dtype=np.int64), np.ones(len(offsets))


def _assert_whole(unit: str, before: str, after: str) -> None:
    text = f"{before} {unit}{after}"
    start = len(before) + 1
    offsets, probs = _every_gap(text)
    spans = decode(text, offsets, probs, DecodeConfig(threshold=0.5))
    cuts = [span.start for span in spans[1:]]
    assert not [c for c in cuts if start < c < start + len(unit)], (unit, [text[c:] for c in cuts])


contexts = st.tuples(
    st.lists(word, min_size=1, max_size=4).map(" ".join).map(lambda s: s.capitalize()),
    st.sampled_from(["", ".", " now.", ", then more.", "! Next one"]),
)


@given(
    st.tuples(word, word, st.sampled_from(["com", "org", "co.uk"]), st.lists(word, max_size=3)),
    st.sampled_from(["https://", "http://", "www."]),
    contexts,
)
def test_never_inside_a_url(parts, scheme, context):
    host, name, tld, path = parts
    url = (
        f"{scheme}{host}.{name}.{tld}" + "".join(f"/{p}" for p in path) + ("/a.html?q=1#top" if path else "")
    )
    _assert_whole(url, *context)


@given(word, word, word, contexts)
def test_never_inside_an_email_address(user, domain, part, context):
    _assert_whole(f"{user}.{part}@{domain}.example", *context)


@given(word, st.sampled_from(["", "_b", ".dev", "2024"]), contexts)
def test_never_inside_a_handle_or_hashtag(name, tail, context):
    _assert_whole(f"@{name}{tail}", *context)
    _assert_whole(f"#{name}{tail.replace('.', '')}", *context)


@given(
    st.integers(1, 99), st.integers(100, 999), st.integers(100, 999), st.integers(1000, 9999),
    st.sampled_from(["+{c} ({a}) {b}-{d}", "({a}) {b} {d}", "+{c} {a} {b} {d}", "+{c}-{a}-{b}-{d}"]),
    contexts,
)  # fmt: skip
def test_never_inside_a_phone_number(country, area, block, line, shape, context):
    _assert_whole(shape.format(c=country, a=area, b=block, d=line), *context)


@given(
    st.lists(st.sampled_from(["etc", "usr", "home", "src", "my-app", "a.b"]), min_size=1, max_size=4),
    st.sampled_from(["/", "~/", "./", "C:\\", ""]),
    st.sampled_from([".conf", ".py", ".tar.gz", ""]),
    contexts,
)
def test_never_inside_a_file_path(parts, root, suffix, context):
    separator = "\\" if root == "C:\\" else "/"
    path = root + separator.join(parts) + suffix
    if root == "" and len(parts) == 1:
        path = f"{parts[0]}/{parts[0]}{suffix}"  # a relative path needs a separator
    if not re.search(r"\w$", path):
        path += "x"
    _assert_whole(path, *context)


@given(
    st.lists(digits, min_size=2, max_size=4),
    st.sampled_from(["v", "V", ""]),
    st.sampled_from(["", "-rc1", "+build.5"]),
    contexts,
)
def test_never_inside_a_version(parts, prefix, suffix, context):
    _assert_whole(prefix + ".".join(parts) + suffix, *context)


@given(
    st.integers(1, 999), st.lists(st.integers(0, 999).map(lambda n: f"{n:03d}"), min_size=1, max_size=3),
    st.sampled_from([",", " ", "."]), st.integers(0, 99), contexts,
)  # fmt: skip
def test_never_inside_a_number_with_separators(head, groups, separator, cents, context):
    number = str(head) + "".join(separator + group for group in groups)
    if separator == ",":
        number += f".{cents:02d}"
    _assert_whole(number, *context)


@given(st.integers(1990, 2030), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23), contexts)
def test_never_inside_a_date_or_time(year, month, day, hour, context):
    _assert_whole(f"{year}-{month:02d}-{day:02d}", *context)
    _assert_whole(f"{hour}:{day:02d}", *context)


EMOJI = [
    "\U0001f469\u200d\U0001f4bb",  # woman technologist (ZWJ)
    "\U0001f44d\U0001f3fd",  # thumbs up, medium skin tone
    "\U0001f1ea\U0001f1fa",  # flag of the EU
    "1\ufe0f\u20e3",  # keycap 1
    "\U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag
    "\U0001f3c3\u200d\u2640\ufe0f",  # woman running
]


@given(st.lists(st.sampled_from(EMOJI), min_size=1, max_size=3).map("".join), contexts)
def test_never_inside_an_emoji_sequence(emoji, context):
    text = f"{context[0]} {emoji}{context[1]}"
    offsets = np.arange(1, len(text), dtype=np.int64)  # every code point a candidate
    spans = decode(text, offsets, np.ones(len(offsets)), DecodeConfig(threshold=0.5))
    start = len(context[0]) + 1
    cuts = {span.start for span in spans[1:]}
    # a cut may fall between two whole emoji, never inside one
    edges, position = {start}, start
    for piece in re.findall("|".join(map(re.escape, EMOJI)), emoji):
        position += len(piece)
        edges.add(position)
    assert not [c for c in cuts if start < c < start + len(emoji) and c not in edges]


@settings(max_examples=50)
@given(st.sampled_from(["Ph.D.", "e.g.", "U.S.", "p.m.", "i.e."]), contexts)
def test_never_inside_an_abbreviation(abbreviation, context):
    _assert_whole(abbreviation[:-1], *context)  # its last period may end a sentence


@given(word, word, st.sampled_from(["`", "``"]), contexts)
def test_never_inside_a_code_span_or_link(a, b, ticks, context):
    _assert_whole(f"{ticks}{a}. {b}(){ticks}", *context)
    _assert_whole(f"[the {a}. docs](https://example.org/{b})", *context)


def test_a_sentence_may_end_right_after_a_unit():
    text = "Upgrade to v2.1.3. Call +1 (555) 010-2000. Mail jo@example.org. Then rest."
    for unit in ("v2.1.3", "010-2000", "example.org"):
        after = text.index(unit) + len(unit) + 2  # past the period and the space
        assert not inside_unit(text, after)
