"""spaCy pipeline component `attention_segmenter`: sets `token.is_sent_start` from a `Segmenter`.

    >>> import spacy
    >>> nlp = spacy.blank("en")
    >>> _ = nlp.add_pipe("attention_segmenter")      # registered through the spacy_factories entry point
    >>> [s.text for s in nlp("It rained. We stayed in.").sents]
    ['It rained.', 'We stayed in.']

`predict` is pure: it returns, per doc, the indices of the tokens that start a sentence (token 0 left
out). `set_annotations` writes `is_sent_start` on every token, keeping values set by an earlier
component unless `overwrite` is true; a doc whose every token is set already (a parser ran before) is
left alone without running the encoder. Character boundaries map to tokens: a boundary inside a token
moves to that token's start, one on a whitespace token to the next token that is not whitespace, and
no sentence is left without a letter or digit.

The encoder loads on first use (or in `initialize`), not at construction, so that `add_pipe`, loading a saved
pipeline and spaCy's scan of entry points stay cheap, and `from_disk` does not load it twice. Importing this
module loads neither transformers nor `segmenter.encoder.torch.encoder`. The settings it shares with
`Segmenter` are held in one `SegmenterConfig` (`component.config`), built from the factory's settings; the
others (overwrite, topics, topic_sensitivity, chunks) are the component's. Serialisation stores the settings
and the probe (msgpack/JSON via srsly, read back within the size and depth limits of
`segmenter.probe.bounded`: a corrupted file is one `ConfigError` line); the backbone weights are never saved,
only the model's name or path. Loading restores the saved settings, except those that
`spacy.load(path, config=...)` overrides. Training a probe and the model code live elsewhere
(`segmenter.training.probe`, `segmenter.api`).
"""

from __future__ import annotations

import inspect
import os
import sys
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from segmenter.config import SegmenterConfig, check_batch_size
from segmenter.decode.line_rules import stands_alone
from segmenter.errors import ConfigError
from segmenter.extras import require
from segmenter.probe.bounded import MAX_ARRAY_BYTES, MAX_JSON_BYTES, parse_json, parse_msgpack, read_bytes

require("spacy", "spacy", "the spaCy component")  # one line naming the extra, instead of a traceback

import srsly
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import ensure_path, from_disk, minibatch, to_disk

# The SegmenterConfig fields the component takes as settings: all but the probe (saved as a file of
# its own, never a setting) and max_chars (not offered). Their defaults are SegmenterConfig's.
NOT_SETTINGS = ("probe", "max_chars", "paired")  # library-only settings: not in the factory or saved cfg
SEGMENTER_SETTINGS = tuple(name for name in SegmenterConfig.field_names() if name not in NOT_SETTINGS)
COMPONENT_SETTINGS: dict[str, Any] = {
    "overwrite": False,
    "topics": False,
    "topic_sensitivity": 1.0,
    "chunks": None,
}


def make_attention_segmenter(
    nlp: Language,
    name: str,
    model: str | None,
    strategy: str,
    threshold: float | None,
    batch_size: int,
    device: str,
    overwrite: bool,
    preset: str,
    precision: str,
    layout: str = "auto",
    topics: bool = False,
    topic_sensitivity: float = 1.0,
    chunks: int | None = None,
) -> AttentionSegmenter:
    """Factory behind `nlp.add_pipe("attention_segmenter", config={...})`. spaCy's config system reads
    the settings from this signature, so it names each one: those of SEGMENTER_SETTINGS and
    COMPONENT_SETTINGS, in the order of DEFAULT_CONFIG (and of the saved `cfg` file)."""
    settings = {key: value for key, value in locals().items() if key in SETTINGS}
    component = AttentionSegmenter(name, **settings)
    component._nlp = weakref.ref(nlp)  # to tell load-time config overrides from saved settings
    return component


SETTINGS = tuple(inspect.signature(make_attention_segmenter).parameters)[2:]  # after nlp and name
if set(SETTINGS) != {*SEGMENTER_SETTINGS, *COMPONENT_SETTINGS}:  # pragma: no cover - caught on import
    raise ConfigError(
        f"the spaCy factory's settings {SETTINGS} are not those of SegmenterConfig and the component"
    )
DEFAULT_CONFIG: dict[str, Any] = {
    key: COMPONENT_SETTINGS[key] if key in COMPONENT_SETTINGS else getattr(SegmenterConfig(), key)
    for key in SETTINGS
}
Language.factory(
    "attention_segmenter",
    assigns=["token.is_sent_start", "doc.sents", "doc.spans"],
    default_config=DEFAULT_CONFIG,
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)(make_attention_segmenter)


class AttentionSegmenter(Pipe):
    """Sentence boundaries from an encoder's attention heads, as a spaCy component.

    The settings of SEGMENTER_SETTINGS (model, strategy, threshold, device, batch_size, precision,
    preset, layout) are those of `segmenter.config.SegmenterConfig`, and held in one, `config`, whose probe is
    the one restored by from_disk/from_bytes (None: the one shipped for the model; `preset` is then
    ignored). The component's own settings:

    overwrite:  False keeps boundaries set by an earlier component; True replaces them
    topics:     also set doc.spans["topics"]: topical sections, each a run of whole sentences
                (`segmenter.topics.segmenter.TopicSegmenter` over doc.sents; off by default)
    topic_sensitivity: how readily a new topic starts (higher: more topics)
    chunks:     None (off), or the most wordpieces of a chunk: also set doc.spans["chunks"], chunks for
                retrieval, each a run of whole sentences (`segmenter.chunking.Chunker` over doc.text,
                char offsets expanded to whole tokens; the text's sentences are found again for them)

    batch_size is encoder windows per forward pass; the windows of all docs in a batch are pooled.
    Each setting is also an attribute (`component.threshold`); a new value is checked at once, and
    used by the segmenter built next (one already built keeps its settings).
    """

    def __init__(
        self,
        name: str = "attention_segmenter",
        *,
        overwrite: bool = False,
        topics: bool = False,
        topic_sensitivity: float = 1.0,
        chunks: int | None = None,
        **settings,
    ):
        unknown = sorted(set(settings) - set(SEGMENTER_SETTINGS))
        if unknown:
            raise TypeError(f"AttentionSegmenter got unknown settings {', '.join(unknown)}")
        self.name = name
        component = {
            "overwrite": overwrite,
            "topics": topics,
            "topic_sensitivity": topic_sensitivity,
            "chunks": chunks,
        }
        self._apply_settings({**DEFAULT_CONFIG, **settings, **component})
        self._segmenter = None
        self._topics = None  # the TopicSegmenter, built on first use when `topics` is on
        self._chunker = None  # the Chunker, built on first use when `chunks` is set
        self._nlp: weakref.ref | None = None  # the pipeline, when built by the factory
        self._pid = os.getpid()  # the process whose torch state the encoder uses

    def __reduce__(self):
        """Picklable (spaCy's multiprocessing may pickle components): name, settings and probe; the
        encoder is loaded again on first use, and the pipeline reference is not kept."""
        return (_rebuild, (self.name, self.cfg, self._current_probe()))

    # -- settings and the lazily built Segmenter ------------------------------------------------------

    def _apply_settings(self, cfg: dict[str, Any], probe=None) -> None:
        """Validate and store the settings `cfg` (all of SETTINGS) and `probe` (cheap checks only: no
        model is loaded here). Nothing is stored unless every setting is valid."""
        for key in ("model", "device"):
            if cfg.get(key) is not None and not isinstance(cfg[key], str):
                raise ConfigError(f"{key} must be a name or a path, got {cfg[key]!r}")
        config = SegmenterConfig(**{key: cfg[key] for key in SEGMENTER_SETTINGS}, probe=probe)
        if not isinstance(cfg["overwrite"], bool):
            raise ConfigError(f"overwrite must be true or false, got {cfg['overwrite']!r}")
        if not isinstance(cfg["topics"], bool):
            raise ConfigError(f"topics must be true or false, got {cfg['topics']!r}")
        from segmenter.topics.segmenter import check_options

        check_options(None, cfg["topic_sensitivity"], 1, None)
        _check_chunks(cfg["chunks"])
        self.config = config
        self.overwrite = cfg["overwrite"]
        self.topics = cfg["topics"]
        self.topic_sensitivity = cfg["topic_sensitivity"]
        self.chunks = cfg["chunks"]

    @property
    def cfg(self) -> dict[str, Any]:
        """The settings, as saved by to_disk/to_bytes."""
        return {key: getattr(self, key) for key in SETTINGS}

    @property
    def segmenter(self):
        """The wrapped `segmenter.Segmenter`, built (encoder loaded) on first access."""
        if self._segmenter is None:
            from segmenter.api import Segmenter

            self._segmenter = Segmenter(self.config)
        return self._segmenter

    def _current_probe(self):
        """The probe the component uses (None for the unsupervised strategies), without the encoder."""
        if self.strategy != "probe":
            return None
        if self._segmenter is not None:
            return self._segmenter.probe
        if self.config.probe is None:
            from segmenter.encoder.torch.encoder import DEFAULT_MODEL_NAME
            from segmenter.probe.shipped import load_probe_for

            probe = load_probe_for(self.model or DEFAULT_MODEL_NAME, None, self.preset)
            self.config = replace(self.config, probe=probe)
        return self.config.probe

    def initialize(self, get_examples: Callable[[], Iterable[Example]] | None = None, *, nlp=None) -> None:
        """Load the encoder now, so that `nlp.initialize()` surfaces a missing model or probe early."""
        self.segmenter  # noqa: B018 - the property loads it

    # -- processing ---------------------------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        self._after_fork()
        error_handler = self.get_error_handler()
        try:
            self.set_annotations([doc], self.predict([doc]))
            self._set_topics([doc])
            self._set_chunks([doc])
            return doc
        except Exception as exc:
            error_handler(self.name, self, [doc], exc)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Process docs `batch_size` at a time; the windows of each batch share encoder passes."""
        if isinstance(stream, str | bytes | Doc):
            raise TypeError(
                f"{self.name}.pipe takes an iterable of Doc, not one {type(stream).__name__}; "
                "call the component on one doc, or nlp.pipe(texts)"
            )
        check_batch_size(batch_size)
        return self._pipe(stream, batch_size)

    def _pipe(self, stream: Iterable[Doc], batch_size: int) -> Iterator[Doc]:
        self._after_fork()
        error_handler = self.get_error_handler()
        for docs in minibatch(stream, size=batch_size):
            try:
                self.set_annotations(docs, self.predict(docs))
                self._set_topics(docs)
                self._set_chunks(docs)
                yield from docs
            except Exception as exc:
                error_handler(self.name, self, docs, exc)

    def _after_fork(self) -> None:
        """In a process forked from the one that ran the encoder (`nlp.pipe(..., n_process=2)` on Linux),
        run torch on one thread: the thread pool inherited over fork would hang its first parallel
        region. The encoder and probe are shared with the parent, copy-on-write."""
        if os.getpid() != self._pid:
            torch = sys.modules.get("torch")  # not loaded by an int8 encoder, which handles forks itself
            if torch is not None:
                torch.set_num_threads(1)
            self._pid = os.getpid()

    def predict(self, docs: Iterable[Doc]) -> list[list[int]]:
        """Per doc, the sorted indices of the tokens after the first that start a sentence (pure)."""
        from segmenter.api import TEXTS_PER_CHUNK

        docs = list(docs)
        starts: list[list[int]] = [[] for _ in docs]
        # one token: nothing to decide; every start already set (a parser ran) and kept: nothing to do
        todo = [i for i, doc in enumerate(docs) if len(doc) > 1 and (self.overwrite or not _fully_set(doc))]
        for first in range(0, len(todo), TEXTS_PER_CHUNK):
            chunk = todo[first : first + TEXTS_PER_CHUNK]
            texts = [docs[i].text for i in chunk]
            gaps = self.segmenter.gap_probabilities(texts)
            for i, text, gap in zip(chunk, texts, gaps, strict=True):
                spans = self.segmenter.decode(text, gap)
                starts[i] = token_starts(docs[i], [span.start for span in spans[1:]])
        return starts

    def set_annotations(self, docs: Iterable[Doc], predictions: list[list[int]]) -> None:
        """Write `is_sent_start` on every token (token 0 starts a sentence); see `overwrite`."""
        for doc, doc_starts in zip(docs, predictions, strict=True):
            if self.overwrite and doc.has_annotation("DEP"):
                raise ConfigError(
                    f"{self.name} cannot overwrite the sentence boundaries of a parsed doc; "
                    "place it before the parser or set overwrite = false"
                )
            earlier = _sent_starts(doc)  # 0 = unset
            if len(doc) == 0 or (not self.overwrite and (earlier != 0).all()):
                continue
            values = np.full(len(doc), -1, dtype=np.int64)  # 1: starts a sentence, -1: does not
            values[0] = 1
            values[np.asarray(doc_starts, dtype=np.int64)] = 1
            if not self.overwrite:  # keep what an earlier component set
                values = np.where(earlier != 0, earlier, values)
            doc.from_array([SENT_START], values.view(np.uint64).reshape(-1, 1))

    def _set_topics(self, docs: list[Doc]) -> None:
        """With `topics` on, doc.spans["topics"]: runs of whole sentences of doc.sents, one per topic."""
        if not self.topics:
            return
        if self._topics is None:
            from segmenter.topics.segmenter import TopicSegmenter

            self._topics = TopicSegmenter(
                self.segmenter, model=self.model, device=self.device, precision=self.precision
            )
        for doc in docs:
            sentences = [s for s in doc.sents if not all(t.is_space for t in s)] if len(doc) else []
            if not sentences:
                doc.spans["topics"] = []
                continue
            vectors = self._topics.vectors([s.text for s in sentences])  # (S, D)
            starts = self._topics.boundaries(vectors, sensitivity=self.topic_sensitivity)
            edges = [0, *starts, len(sentences)]
            doc.spans["topics"] = [
                doc[sentences[a].start : sentences[b - 1].end] for a, b in zip(edges, edges[1:], strict=False)
            ]

    def _set_chunks(self, docs: list[Doc]) -> None:
        """With `chunks` set, doc.spans["chunks"]: the chunks of doc.text of at most `chunks` wordpieces."""
        if self.chunks is None:
            return
        chunker = self._chunker_now()
        for doc in docs:
            spans = (doc.char_span(c.start, c.end, alignment_mode="expand") for c in chunker.chunk(doc.text))
            doc.spans["chunks"] = [span for span in spans if span is not None]

    def _chunker_now(self):
        """The Chunker of the current `chunks` and segmenter (sharing the topics' sentence vectors)."""
        chunker = self._chunker
        stale = chunker is None or chunker.segmenter is not self.segmenter
        if stale or chunker.config.max_tokens != self.chunks:
            from segmenter.chunking.chunker import Chunker

            vectors = self._topics.vectors if self._topics is not None else None
            self._chunker = Chunker(self.segmenter, vectors=vectors, max_tokens=self.chunks)
        return self._chunker

    def score(self, examples: Iterable[Example], **kwargs) -> dict[str, Any]:
        """sents_p, sents_r and sents_f of the predicted sentences against the reference ones."""
        validate_examples(examples, "AttentionSegmenter.score")
        results = Scorer.score_spans(
            examples, "sents", has_annotation=lambda doc: doc.has_annotation("SENT_START"), **kwargs
        )
        results.pop("sents_per_type", None)
        return results

    # -- serialisation: settings + probe, never the backbone weights ------------------------------------

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        probe = self._current_probe()
        return srsly.msgpack_dumps({"cfg": self.cfg, "probe": None if probe is None else probe.to_bytes()})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = ()) -> AttentionSegmenter:
        try:
            data = parse_msgpack(bytes_data)
            if not isinstance(data, dict) or not isinstance(data.get("cfg"), dict):
                raise ValueError("no settings in it")
        except ValueError as exc:
            raise ConfigError(f"stored {self.name} component is corrupted ({exc}); save it again") from exc
        self._restore(data["cfg"], data.get("probe"))
        return self

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        probe = self._current_probe()
        writers = {"cfg": lambda p: srsly.write_json(p, self.cfg)}
        if probe is not None:
            writers["probe"] = lambda p: srsly.write_msgpack(p, probe.to_bytes())
        to_disk(path, writers, exclude)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> AttentionSegmenter:
        path = ensure_path(path)
        found: dict[str, Any] = {"cfg": self.cfg, "probe": None}

        def read_cfg(p: Path) -> None:
            found["cfg"] = _read_saved(p, parse_json, MAX_JSON_BYTES)
            if not isinstance(found["cfg"], dict):
                raise ConfigError(f"saved settings {p} are corrupted (not a JSON object); save them again")

        def read_probe(p: Path) -> None:
            if p.exists():
                found["probe"] = _read_saved(p, parse_msgpack, MAX_ARRAY_BYTES)

        from_disk(path, {"cfg": read_cfg, "probe": read_probe}, exclude)
        self._restore({**found["cfg"], **self._load_time_overrides(path)}, found["probe"])
        return self

    def _load_time_overrides(self, path: Path) -> dict[str, Any]:
        """Settings that `spacy.load(path, config=...)` overrides: where the pipeline's config differs
        from the config.cfg saved beside this component. None when loaded any other way."""
        nlp = self._nlp() if self._nlp is not None else None
        saved_config = path.parent / "config.cfg"
        if nlp is None or not saved_config.is_file():
            return {}
        from spacy.util import load_config

        saved = load_config(saved_config, interpolate=False)["components"].get(self.name, {})
        current = nlp.config["components"].get(self.name, {})
        return {key: current[key] for key in SETTINGS if key in current and current[key] != saved.get(key)}

    def _restore(self, cfg: dict[str, Any], probe_data: dict | None) -> None:
        """Adopt saved settings and probe; the Segmenter is rebuilt with them on next use."""
        from segmenter.probe.probe import Probe

        probe = None if probe_data is None else Probe.from_bytes(probe_data)
        # settings saved before preset/precision existed lack them: those keep their current values
        self._apply_settings({**self.cfg, **cfg}, probe)
        self._segmenter = None
        self._topics = None
        self._chunker = None


def _check_chunks(chunks: Any) -> None:
    """A ConfigError unless `chunks` is None or a positive whole number of wordpieces."""
    if chunks is not None and (isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1):
        raise ConfigError(f"chunks must be null (off) or a positive number of wordpieces, got {chunks!r}")


def _segmenter_setting(name: str) -> property:
    """The attribute `name` of AttentionSegmenter: the field of its `config`; setting it checks the
    value and replaces the config (the probe kept)."""

    def get(component: AttentionSegmenter):
        return getattr(component.config, name)

    def set_(component: AttentionSegmenter, value) -> None:
        component._apply_settings({**component.cfg, name: value}, component.config.probe)

    return property(get, set_, doc=f"The `{name}` of the component's SegmenterConfig.")


for _name in SEGMENTER_SETTINGS:
    setattr(AttentionSegmenter, _name, _segmenter_setting(_name))


def _read_saved(path: Path, parse: Callable[[bytes], Any], limit: int) -> Any:
    """The data of a file `to_disk` wrote, parsed within `limit` bytes and `bounded.MAX_DEPTH` levels;
    a ConfigError naming the file when it is unreadable, too large, too deep or garbled."""
    try:
        return parse(read_bytes(path, limit))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"saved file {path} is corrupted ({exc}); save the pipeline again") from exc


def _rebuild(name: str, cfg: dict[str, Any], probe) -> AttentionSegmenter:
    """Unpickle an `AttentionSegmenter` (see its `__reduce__`)."""
    component = AttentionSegmenter(name, **cfg)
    component.config = replace(component.config, probe=probe)
    return component


def _sent_starts(doc: Doc) -> np.ndarray:
    """(n,) int64 sentence-start values of `doc`'s tokens: 1 starts, -1 does not, 0 not set."""
    return doc.to_array(SENT_START).view(np.int64)


def _fully_set(doc: Doc) -> bool:
    """Whether every token already says whether it starts a sentence."""
    return bool((_sent_starts(doc) != 0).all())


def token_starts(doc: Doc, offsets: Iterable[int]) -> list[int]:
    """Sorted indices of the tokens that start at the character `offsets` (token 0 left out).

    An offset inside a token (or its trailing whitespace) belongs to that token (or the next one);
    a whitespace token passes it on to the next token that is not whitespace. A start that would leave
    the sentence before it without a letter or digit (a boundary moved back past a lone bracket or
    quote) is dropped, as `decode` does for its own spans, unless it is a run of symbols that stands
    alone ("--", "=====": `segmenter.decode.line_rules.stands_alone`).
    """
    token_idx = [token.idx for token in doc]
    found = set()
    for offset in offsets:
        i = bisect_right(token_idx, offset) - 1
        if i >= 0 and offset >= token_idx[i] + len(doc[i].text):
            i += 1  # in the whitespace after token i
        while i < len(doc) and doc[i].is_space:
            i += 1
        if 0 < i < len(doc):
            found.add(i)
    # alnum_before[i]: tokens 0..i-1 holding a letter or digit; one pass, so dropping stays linear
    alnum_before = [0]
    for token in doc:
        alnum_before.append(alnum_before[-1] + any(char.isalnum() for char in token.text))
    kept, last = [], 0
    for i in sorted(found):
        # a run of symbols such as a signature's "--" stands as a sentence of its own, as in `decode`
        symbols = last > 0 and stands_alone(doc.text[doc[last].idx : doc[i].idx])  # not at the start
        if alnum_before[i] > alnum_before[last] or symbols:
            kept.append(i)
            last = i
    return kept
