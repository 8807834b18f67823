"""Tune the encoder with its probe: low-rank deltas on blocks 1..K, trained jointly with an MLP head.

The head reads what a frozen-encoder probe with `FeatureConfig(layers=(K,), hidden=True, surface=True,
lines=True)` reads: block K's output, the case/punctuation flags and the line features of the two tokens
around each gap (`lines=False`: without the line features). With `signals=True` it also reads the
paper's signals from block K's attention (`segmenter.probe.features.SIGNALS`: attention received, sent to the
final [SEP] and to [CLS], head-vector similarity contrast), computed from the encoder as it is being
tuned (with gradients) and standardised with their mean and spread under the untuned encoder.
Training minimises binary cross-entropy over every candidate gap (before a word-start token) of sliding
windows over the training documents, under each condition (as written, corrupted, laid out in lines).
With a teacher (`TuneConfig.teacher`, a larger tuned probe: `segmenter.training.teacher`) each gap's target is
a mix of its gold label and the teacher's probability, computed once before the first epoch.
The result is an ordinary `Probe` (the head's arrays, no standardisation) that carries the encoder
deltas; its thresholds are chosen on held-out documents from features computed as the segmenter computes
them (merged deltas, the inference precision), gap by gap in each window (the segmenter also averages
overlapping windows).
Reading data and the CLI live elsewhere.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.backend import native_bfloat16
from segmenter.encoder.torch.encoder import Encoder, Tokens, attention_summary
from segmenter.encoder.torch.pruning import prune
from segmenter.errors import ConfigError, InputError
from segmenter.gold.corpus import Document
from segmenter.probe.contrast import contrast
from segmenter.probe.features import SIGNALS
from segmenter.probe.meta import ProbeMeta
from segmenter.probe.probe import Probe
from segmenter.readers.extract import window_inputs
from segmenter.readers.windows import Window, plan
from segmenter.text.conditions import TRAINING_CONDITIONS
from segmenter.text.surface import with_surface
from segmenter.training.adapters import DENSE, attach, export
from segmenter.training.probe import (
    check_unmarked_share,
    collect_gaps,
    conditioned,
    held_out_thresholds,
    split_documents,
    split_seed,
)
from segmenter.training.pruning import choose, importance
from segmenter.training.teacher import DocumentTeacher, Teacher

IGNORE = -1  # label of positions that are not candidate gaps
PRUNING_SAMPLE = 64  # batches of training windows that rank the heads and units to keep


@dataclass(frozen=True)
class TuneConfig:
    # the recipe of the shipped presets (blocks: 3 for `accurate`, 2 for `fast`)
    blocks: int = 3  # blocks 1..blocks get deltas; the head reads block `blocks`'s output
    rank: int = 16
    epochs: int = 8
    learning_rate: float = 5e-4  # of the deltas (one-cycle schedule); the head's is head_learning_rate
    head_learning_rate: float = 1e-3
    hidden_units: int = 256
    window: WindowConfig = WindowConfig(size=128, stride=96)
    conditions: tuple[str, ...] = TRAINING_CONDITIONS
    holdout: float = 0.2
    batch_size: int = 16
    seed: int = 0
    split_seed: int | None = None  # seed of the held-out split; None: `seed`
    lines: bool = True  # the head also reads the line features (`segmenter.text.line_features`)
    unmarked_share: float = 0.0  # of the sentences of clean training text, stripped of final punctuation
    signals: bool = False  # the head also reads block `blocks`'s attention signals
    heads: int | None = (
        None  # attention heads each tuned block keeps (None: all; `segmenter.encoder.torch.pruning`)
    )
    units: int | None = None  # feed-forward units each tuned block keeps (None: all)
    teacher: str | None = None  # distil from this probe: a preset of the (teacher's) backbone or a folder
    teacher_weight: float = 0.5  # share of the teacher's probability in each gap's target (the rest: gold)
    teacher_model: str | None = None  # the teacher's backbone when not the student's (`DocumentTeacher`)

    def __post_init__(self) -> None:
        check_unmarked_share(self.unmarked_share)
        for name in ("blocks", "rank", "epochs", "hidden_units", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("heads", "units"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= self.teacher_weight <= 1.0:
            raise ConfigError(f"teacher_weight must be between 0 and 1, got {self.teacher_weight}")
        if self.teacher_model is not None and self.teacher is None:
            raise ConfigError("teacher_model names the teacher's backbone; give the teacher too")
        if self.signals and self.heads is not None:
            raise ConfigError("signals are read from every head of a block; do not prune heads with signals")

    @property
    def pruned(self) -> bool:
        return self.heads is not None or self.units is not None

    @property
    def features(self) -> FeatureConfig:
        return FeatureConfig(
            layers=(self.blocks,),
            vectors=False,
            signals=self.signals,
            hidden=True,
            surface=True,
            lines=self.lines,
        )


@dataclass(frozen=True)
class _Example:
    """One training text: tokens with surface flags, and a label per token (gap before it)."""

    tokens: Tokens
    labels: np.ndarray  # (N,) int64: 1 boundary, 0 no boundary, IGNORE not a candidate


def tune_probe(
    model: str | None,
    docs: Sequence[Document],
    config: TuneConfig,
    sources: Sequence[str],
    precision: str = "auto",
    progress: Callable[[int], None] | None = None,
    start: Callable[[int], None] | None = None,
) -> Probe:
    """Tune deltas and head on `docs` (under each condition); thresholds from a held-out share.

    model: backbone (None: the packaged default). precision: of the inference the thresholds are chosen
    for (training runs float32 weights, with bfloat16 products where the CPU has them natively).
    start(total) is called once with the number of progress steps (training batches) before the first
    `progress(1)`. Seeds torch's global generator with `config.seed` (the head's initial weights and
    dropout draw from it).
    """
    torch.manual_seed(config.seed)
    train_docs, held_docs = split_documents(docs, config.holdout, split_seed(config))
    encoder = Encoder(model, max_layer=config.blocks, precision="float32")
    variants = conditioned(train_docs, config.conditions, config.unmarked_share)
    examples = [_example(encoder, doc, config.lines) for _, doc in variants]
    windows = [
        w for i, ex in enumerate(examples) for w in plan(len(ex.tokens), config.window, text=i) if len(w) >= 2
    ]
    if not any((ex.labels >= 0).any() for ex in examples) or not windows:
        raise InputError("training documents hold no candidate gaps; give more text")
    batches_per_epoch = math.ceil(len(windows) / config.batch_size)
    teacher_steps = 0  # the teacher's pass: one step per batch of documents (another backbone) or windows
    if config.teacher is not None:
        teacher_steps = math.ceil(
            (len(examples) if config.teacher_model else len(windows)) / config.batch_size
        )
    if start is not None:  # the teacher's pass, then the epochs
        start(config.epochs * batches_per_epoch + teacher_steps)
    targets = None
    if config.teacher is not None:
        targets = _distilled_targets(model, encoder, config, variants, examples, windows, precision, progress)

    pruning = {}
    if config.pruned:  # rank heads and units on a sample of the training windows, keep the largest
        picked = np.sort(
            np.random.default_rng(config.seed).permutation(len(windows))[: PRUNING_SAMPLE * config.batch_size]
        )
        sample = [
            _batch(encoder, examples, [windows[i] for i in picked[first : first + config.batch_size]])[:2]
            for first in range(0, len(picked), config.batch_size)
        ]
        scores = importance(encoder.model.float().eval(), sample, config.blocks)
        pruning = choose(scores, config.heads, config.units)
        prune(encoder.model, pruning)
    model_ = encoder.model.float().train()
    reader = None
    if config.signals:  # standardised with their spread under the untuned encoder
        reader = _SignalReader(encoder, config.blocks, config.features.span)
        reader.fit_scale(
            [
                _batch(encoder, examples, windows[i : i + config.batch_size])
                for i in range(0, min(len(windows), 32 * config.batch_size), config.batch_size)
            ]
        )
    deltas = attach(model_, config.blocks, config.rank, config.seed)
    n_signals = 0 if reader is None else reader.width
    width = n_signals + encoder.hidden_size + examples[0].tokens.surface.shape[1]
    head = torch.nn.Sequential(
        torch.nn.Linear(2 * width, config.hidden_units),
        torch.nn.ReLU(),
        torch.nn.Linear(config.hidden_units, 1),
    )
    optimiser = torch.optim.AdamW(
        [
            {"params": deltas, "lr": config.learning_rate},
            {"params": head.parameters(), "lr": config.head_learning_rate},
        ],
        weight_decay=0.01,
    )
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser,
        max_lr=[config.learning_rate, config.head_learning_rate],
        total_steps=config.epochs * batches_per_epoch,
        pct_start=0.1,
    )
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=native_bfloat16(torch.device("cpu")))
    order = np.random.default_rng(config.seed)
    for _ in range(config.epochs):
        shuffled = order.permutation(len(windows))
        for first in range(0, len(windows), config.batch_size):
            picked = shuffled[first : first + config.batch_size]
            batch = [windows[i] for i in picked]
            ids, mask, labels, surface = _batch(encoder, examples, batch)
            with autocast:
                logits = _gap_logits(model_, head, ids, mask, surface, reader)  # (B, T)
            real = labels != IGNORE
            target = labels.float()  # (B, T)
            if targets is not None:  # gold and the teacher's probability, mixed
                share = config.teacher_weight
                for row, i in enumerate(picked):
                    gaps = slice(2, 1 + len(windows[i]))
                    target[row, gaps] = share * torch.from_numpy(targets[i]) + (1 - share) * target[row, gaps]
            if real.any():  # a batch of windows inside long words has no candidate gap to learn from
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits[real].float(), target[real]
                )
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                schedule.step()
            if progress is not None:
                progress(1)

    mean, scale = np.zeros(width, np.float32), np.ones(width, np.float32)
    if reader is not None:  # the signals come first in a token's features (`WindowFeatures.token_matrix`)
        mean[:n_signals], scale[:n_signals] = reader.mean.numpy(), reader.scale.numpy()
    probe = Probe(
        np.tile(mean, 2),  # (2 * width,): the left token's features, then the right one's
        np.tile(scale, 2),
        tuple(layer.weight.detach().numpy().T.copy() for layer in (head[0], head[2])),  # (in, out)
        tuple(layer.bias.detach().numpy().copy() for layer in (head[0], head[2])),
        deltas=export(model_),
        pruning=pruning,
    )
    del model_, encoder

    # Thresholds: from features as the segmenter computes them (merged deltas, inference precision).
    tuned = Encoder(
        model, max_layer=config.blocks, precision=precision, deltas=probe.deltas, pruning=probe.pruning
    )
    held = collect_gaps(
        tuned, held_docs, config.conditions, config.features, config.window, config.batch_size
    )
    threshold, thresholds, scores = held_out_thresholds(probe, held)
    record = {
        "kind": "mlp",
        "hidden_units": config.hidden_units,
        "members": 1,
        "seed": config.seed,
        "split_seed": split_seed(config),
        "tuned": {
            "blocks": config.blocks,
            "dense_layers": list(DENSE),
            "rank": config.rank,
            "epochs": config.epochs,
            "learning_rate": config.learning_rate,
            "head_learning_rate": config.head_learning_rate,
            "batch_size": config.batch_size,
            **({"kept": {"heads": config.heads, "units": config.units}} if config.pruned else {}),
            **(
                {
                    "teacher": config.teacher,
                    "teacher_weight": config.teacher_weight,
                    **({"teacher_model": config.teacher_model} if config.teacher_model else {}),
                }
                if config.teacher
                else {}
            ),
        },
        "conditions": list(config.conditions),
        "unmarked_share": config.unmarked_share,
        "training_data": list(sources),
        "n_documents": {"train": len(train_docs), "held_out": len(held_docs)},
        "n_train_windows": len(windows),
        "n_train_gaps": int(sum((ex.labels >= 0).sum() for ex in examples)),
        "n_train_boundaries": int(sum((ex.labels == 1).sum() for ex in examples)),
        "held_out_gap_scores": scores,  # per condition, at that condition's threshold
        "created": _dt.date.today().isoformat(),
    }
    meta = ProbeMeta(
        config.features,
        config.window,
        threshold,
        thresholds,
        backbone=tuned.name,
        precision=tuned.precision,  # of the features the thresholds were chosen on
        training=record,
    )
    return replace(probe, meta=meta.to_json())


def _example(encoder: Encoder, doc: Document, lines: bool) -> _Example:
    tokens = with_surface(encoder.tokenize(doc.text), doc.text, lines)
    gold = set(doc.boundaries)
    labels = np.full(len(tokens), IGNORE, dtype=np.int64)
    starts = np.flatnonzero(tokens.word_start)
    labels[starts] = [int(offset in gold) for offset in tokens.offsets[starts, 0].tolist()]
    labels[:1] = IGNORE  # no gap before the text's first token
    return _Example(tokens, labels)


def _teacher_probe(spec: str, backbone: str) -> Probe:
    """The probe in folder `spec`, or the shipped preset `spec` of `backbone`."""
    # imported here: the segmenter's module imports far more than training needs
    from segmenter.probe.shipped import load_probe_for

    return Probe.load(spec) if Path(spec).is_dir() else load_probe_for(backbone, None, spec)


def _distilled_targets(
    model: str | None,
    encoder: Encoder,
    config: TuneConfig,
    variants: list[tuple[str, Document]],
    examples: list[_Example],
    windows: list[Window],
    precision: str,
    progress: Callable[[int], None] | None,
) -> list[np.ndarray]:
    """Per window, (len - 1,) float32: `config.teacher`'s probability of a boundary in each gap of the
    window, as `_teacher_targets` lays them out; `variants` are the documents behind `examples`."""
    if config.teacher_model is not None:  # another backbone: whole documents, matched by offset
        teacher = DocumentTeacher(config.teacher_model, config.teacher, precision)
        read = [doc for _, doc in variants]
        per_text = _document_targets(teacher, read, examples, config.batch_size, progress)
        return [per_text[w.text][w.start + 1 : w.end] for w in windows]
    teacher = Teacher(model, _teacher_probe(config.teacher, encoder.name), precision)
    taught = examples  # the teacher's surface flags: the student's, unless one reads line features
    if teacher.lines != config.lines:
        taught = [_example(encoder, doc, teacher.lines) for _, doc in variants]
    return _teacher_targets(teacher, encoder, taught, windows, config.batch_size, progress)


def _document_targets(
    teacher: DocumentTeacher,
    docs: list[Document],
    examples: list[_Example],
    batch_size: int,
    progress: Callable[[int], None] | None,
) -> list[np.ndarray]:
    """Per example, (N,) float32 over its tokens: the teacher's probability of a boundary in the gap
    before each token, read from its document whole (gold where the teacher scores no such gap)."""
    targets = []
    for first in range(0, len(docs), batch_size):
        chunk = slice(first, first + batch_size)
        targets.extend(
            teacher.targets(
                [doc.text for doc in docs[chunk]],
                [ex.tokens for ex in examples[chunk]],
                [ex.labels for ex in examples[chunk]],
            )
        )
        if progress is not None:
            progress(1)
    return targets


def _teacher_targets(
    teacher: Teacher,
    encoder: Encoder,
    examples: list[_Example],
    windows: list[Window],
    batch_size: int,
    progress: Callable[[int], None] | None,
) -> list[np.ndarray]:
    """Per window, (len - 1,) float32: the teacher's probability of a boundary in each gap of the window
    (positions 2 .. len of its batch row, as `_batch` lays labels out); `examples` carry the teacher's
    surface flags."""
    targets = []
    for first in range(0, len(windows), batch_size):
        batch = windows[first : first + batch_size]
        ids, mask, _, surface = _batch(encoder, examples, batch)
        probs = teacher.probabilities(ids, mask, surface)  # (B, T)
        targets.extend(probs[row, 2 : 1 + len(window)].copy() for row, window in enumerate(batch))
        if progress is not None:
            progress(1)
    return targets


def _batch(
    encoder: Encoder, examples: list[_Example], batch: list[Window]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """ids, mask (B, T); labels (B, T) of the gap before each position (IGNORE where none: special
    tokens, padding, a window's first token); surface flags (B, T, F)."""
    ids, mask = window_inputs(encoder, [ex.tokens for ex in examples], batch)
    width, flags = ids.shape[1], examples[0].tokens.surface.shape[1]
    labels = np.full((len(batch), width), IGNORE, dtype=np.int64)
    surface = np.zeros((len(batch), width, flags), dtype=np.float32)
    for row, window in enumerate(batch):
        example = examples[window.text]
        # text token i of the window sits at position 1 + i; the gap before it exists for i >= 1
        labels[row, 2 : 1 + len(window)] = example.labels[window.start + 1 : window.end]
        surface[row, 1 : 1 + len(window)] = example.tokens.surface[window.start : window.end]
    return torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(labels), torch.from_numpy(surface)


class _SignalReader:
    """Reads the standardised attention signals of one block during tuning (module docstring)."""

    def __init__(self, encoder: Encoder, layer: int, span: int):
        self.encoder, self.layer, self.span = encoder, layer, span
        self.width = len(SIGNALS) * encoder.n_heads
        self.mean = torch.zeros(self.width)
        self.scale = torch.ones(self.width)

    def fit_scale(self, batches: list) -> None:
        """Mean and spread of each signal over the real text tokens of `batches` (`_batch` tuples)."""
        values = []
        with torch.no_grad():
            for ids, mask, _, _ in batches:
                with self.encoder.reading(self.layer, mask) as store:
                    self.encoder.model(input_ids=ids, attention_mask=mask)
                signals = self.raw(store, mask)  # (B, T, S*H)
                text = mask.bool().clone()
                text[:, 0] = False
                text[torch.arange(len(mask)), mask.sum(-1) - 1] = False  # not [CLS] or the final [SEP]
                values.append(signals[text])
        every = torch.cat(values)  # (tokens, S*H)
        self.mean = every.mean(0)
        self.scale = every.std(0).clamp(min=1e-6)

    def raw(self, store: dict, mask: torch.Tensor) -> torch.Tensor:
        """(B, T, S*H) signals of each position, in `SIGNALS` order then head, as inference reads them
        (`features.window_features`); from the probabilities and contexts `Encoder.reading` stored."""
        probs = store[("p", self.layer)].float()  # (B, H, T, T)
        contexts = store[("ctx", self.layer)].float()  # (B, T, H*d)
        batch, heads, width, _ = probs.shape
        summary = attention_summary(probs, mask)  # (B, 3, H, T): received, to_sep, to_cls
        gaps = torch.zeros(batch, heads, width)  # (B, H, T): contrast at the gap after each token
        if width > 3:
            text = contexts[:, 1 : width - 1].reshape(1, batch, width - 2, heads, -1)  # (1, B, N, H, d)
            found = contrast(text, (mask.sum(-1) - 2).clamp(min=0), self.span)  # (1, B, N-1, H)
            gaps[:, :, 1 : width - 2] = found[0].transpose(1, 2)
        signals = torch.cat([summary, gaps[:, None]], dim=1)  # (B, S, H, T)
        return signals.permute(0, 3, 1, 2).reshape(batch, width, -1)

    def __call__(self, store: dict, mask: torch.Tensor) -> torch.Tensor:
        """(B, T, S*H) standardised signals."""
        return (self.raw(store, mask) - self.mean) / self.scale


def _gap_logits(
    model: torch.nn.Module,
    head: torch.nn.Module,
    ids: torch.Tensor,
    mask: torch.Tensor,
    surface: torch.Tensor,
    reader: _SignalReader | None = None,
) -> torch.Tensor:
    """(B, T) logit of a boundary in the gap before each position, from the features of the tokens on
    both sides (the layout of `WindowFeatures.gap_matrix` with context 1: left token first)."""
    reading = contextlib.nullcontext() if reader is None else reader.encoder.reading(reader.layer, mask)
    with reading as store:
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state.float()  # (B, T, D)
    signals = [] if reader is None else [reader(store, mask)]  # (B, T, S*H)
    tokens = torch.cat([*signals, hidden, surface], dim=-1)  # (B, T, [S*H +] D + F)
    left = torch.roll(tokens, shifts=1, dims=1)  # position t holds token t-1
    return head(torch.cat([left, tokens], dim=-1)).squeeze(-1)
