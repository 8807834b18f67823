"""A boundary probe: stored as plain arrays, predicting with torch or numpy.

Two kinds share one format: `logistic` (one linear layer) and `mlp` (one ReLU hidden layer, then a
linear output). Inputs are standardised with the training mean and scale. A probe trained together with
its encoder (`segmenter.training.tune`) also carries that encoder's low-rank weight deltas, which the
encoder merges when it loads (`segmenter.encoder.torch.adapter`), and, when its blocks were narrowed, the
heads and feed-forward units they keep (`segmenter.encoder.torch.pruning`). On disk a probe is a folder
with `probe.npz` (arrays only, loaded with allow_pickle=False) and `meta.json` (human-readable:
backbone, layers, window, features, threshold, training data, scores; its schema is
`segmenter.probe.meta.ProbeMeta`), written together in one rename and read within the size and depth
limits of `segmenter.probe.bounded`. Inference runs the products in
torch (on the encoder's thread pool), in float32 except for the first product of `predict_windows`,
which the caller may run in bfloat16; beside the int8 encoder, which runs without torch, in numpy.
torch is imported where it is used. Fitting a probe with scikit-learn (`fit`, and `average`, which
merges MLPs fitted with different seeds into one wider MLP) is training's:
`segmenter.training.fitting`. Feature extraction lives elsewhere.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from segmenter.encoder.arrays import check_keep, layers_of
from segmenter.errors import ProbeError
from segmenter.probe.bounded import MAX_ARRAY_BYTES, MAX_JSON_BYTES, parse_json, read_bytes
from segmenter.probe.features import gap_picks
from segmenter.probe.meta import is_folder_name

if TYPE_CHECKING:
    import threadpoolctl
    import torch

ARRAYS = "probe.npz"
DELTA_PREFIX = "delta:"  # array names of the encoder deltas inside probe.npz
KEEP_PREFIX = "keep:"  # array names of the heads and units pruned blocks keep
META = "meta.json"
KINDS = ("logistic", "mlp")


@dataclass(frozen=True)
class Probe:
    """p(boundary | x) = sigmoid(f((x - mean) / scale)), f a stack of dense layers with ReLU between.

    mean, scale: (D,) float32
    weights:     per layer (D_in, D_out) float32; the last layer has D_out = 1
    biases:      per layer (D_out,) float32
    meta:        free-form JSON-able description
    deltas:      low-rank encoder weight deltas the probe was trained with ("<dense layer>.a" (r, in),
                 "<dense layer>.b" (out, r)); empty for a probe of the frozen encoder
    pruning:     per pruned block, the heads and feed-forward units it keeps ("encoder.layer.N.heads",
                 "encoder.layer.N.units": ascending int64 indices, `segmenter.encoder.torch.pruning`); applied
                 before the deltas are merged; empty when no block was pruned
    source:      the folder it was loaded from (None when built in memory); not saved
    punctuated:  the probe that reads punctuated text in this one's place, where its meta names one
                 (`punctuated_probe`: a folder inside this probe's); saved and loaded with it
    averaged:    the probes whose gap probabilities are averaged with this one's, where its meta names
                 them (`averaged_probes`: folders inside this probe's); saved and loaded with it
    """

    mean: np.ndarray
    scale: np.ndarray
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    meta: dict = field(default_factory=dict)
    deltas: dict[str, np.ndarray] = field(default_factory=dict)
    pruning: dict[str, np.ndarray] = field(default_factory=dict)
    source: str | None = None
    punctuated: Probe | None = None
    averaged: tuple[Probe, ...] = ()
    _cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)  # derived, not saved

    @property
    def dimension(self) -> int:
        return int(self.mean.shape[0])

    def logits(self, features: np.ndarray) -> np.ndarray:
        """features: (G, D) -> (G,) log-odds of a boundary."""
        import torch

        if features.shape[-1] != self.dimension:
            raise ProbeError(
                f"probe expects {self.dimension} features per gap, got {features.shape[-1]}; "
                "it was trained for another backbone or feature set"
            )
        # The products run in torch, on the thread pool the encoder uses: numpy's own BLAS threads would
        # keep spinning after each call and starve the encoder's threads (2x slower on 2 cores).
        x = _tensor((features - self.mean) / self.scale)  # (G, D)
        with torch.inference_mode():
            h = torch.addmm(_tensor(self.biases[0]), x, _tensor(self.weights[0]))  # (G, H0)
            return self._after_first_layer(h)

    def predict_windows(
        self, tokens: list[np.ndarray], context: int, precision: str = "float32"
    ) -> list[np.ndarray]:
        """Per window, (n-1,) boundary probabilities of its gaps from its (n, F) token features.

        The same as `predict` on each window's `gap_matrix(context)`, without building gap matrices:
        the first layer is applied to every token once, for each of the 2 * context slots a token can
        fill, and each gap adds up the rows of the tokens in its slots. precision: the encoder's.
        "bfloat16" runs that first product in bfloat16 (its products take a third of the time, and
        its block outputs, most of the features, are bfloat16 values already) and the rest in float32,
        in torch; "float32" runs all of it in float32, in torch; "int8" in float32 in numpy, since
        that encoder runs without torch (`segmenter.encoder.onnx.compiled`).
        """
        slots = 2 * context
        width = tokens[0].shape[1] if tokens else 0
        if slots * width != self.dimension:
            raise ProbeError(
                f"probe expects {self.dimension} features per gap, got {slots} x {width}; "
                "it was trained for another backbone or feature set"
            )
        starts = np.cumsum([0, *(len(t) for t in tokens)])[:-1]
        picks = np.concatenate([s + gap_picks(len(t), context) for s, t in zip(starts, tokens, strict=True)])
        x = np.concatenate(tokens).astype(np.float32, copy=False)  # (N, F)
        if precision == "int8":
            probs = _sigmoid(self._numpy_logits(x, picks, slots))
        else:
            probs = _sigmoid(self._torch_logits(x, picks, slots, precision))
        return np.split(probs, np.cumsum([max(len(t) - 1, 0) for t in tokens])[:-1])

    def _numpy_logits(self, x: np.ndarray, picks: np.ndarray, slots: int) -> np.ndarray:
        """(G,) logits of the gaps `picks` (G, slots) rows of x (N, F) fill, in numpy float32."""
        if (slots, "numpy") not in self._cache:
            self._cache[(slots, "numpy")] = self._fold(slots)
        by_slot, b0 = self._cache[(slots, "numpy")]
        # One BLAS thread: BLAS threads keep spinning after a product and slow the encoder's next run
        # (at two threads: 52,000-61,000 chars/s with two BLAS threads, 62,000 with one).
        with _blas_libraries().limit(limits=1, user_api="blas"):
            per_slot = (x @ by_slot).reshape(len(x), slots, -1)  # (N, slots, H0)
            h = per_slot[picks, np.arange(slots)].sum(1) + b0  # (G, H0)
            for w, b in zip(self.weights[1:], self.biases[1:], strict=True):
                h = np.maximum(h, 0.0) @ w.astype(np.float32, copy=False) + b  # (G, D_out)
        return h[:, 0]

    def _torch_logits(self, x: np.ndarray, picks: np.ndarray, slots: int, precision: str) -> np.ndarray:
        """`_numpy_logits` in torch, its first product in bfloat16 where `precision` is."""
        import torch

        dtype = torch.bfloat16 if precision == "bfloat16" else torch.float32
        if (slots, precision) not in self._cache:
            by_slot, b0 = self._fold(slots)
            self._cache[(slots, precision)] = (_tensor(by_slot).to(dtype), _tensor(b0))
        by_slot, b0 = self._cache[(slots, precision)]
        units = b0.shape[0]
        with torch.inference_mode():
            per_slot = (
                (torch.from_numpy(x).to(dtype) @ by_slot).float().view(-1, slots, units)
            )  # (N, slots, H0)
            index = torch.from_numpy(picks)  # (G, slots)
            h = per_slot[index, torch.arange(slots)].sum(1) + b0  # (G, H0)
            return self._after_first_layer(h)

    def _after_first_layer(self, h: torch.Tensor) -> np.ndarray:
        """(G,) logits from (G, H0) outputs of the first dense layer (before its ReLU, if any)."""
        import torch

        for w, b in zip(self.weights[1:], self.biases[1:], strict=True):
            h = torch.addmm(_tensor(b), torch.relu_(h), _tensor(w))  # (G, D_out)
        return h[:, 0].numpy()

    def _fold(self, slots: int) -> tuple[np.ndarray, np.ndarray]:
        """The first layer with the standardisation folded in, its columns grouped by slot:
        (F, slots * H0) weights and (H0,) bias, float32, so that layer 1 of a gap = sum over its slots."""
        w0 = self.weights[0] / self.scale[:, None]  # (slots * F, H0)
        b0 = self.biases[0] - (self.mean / self.scale) @ self.weights[0]  # (H0,)
        width, units = w0.shape[0] // slots, w0.shape[1]
        by_slot = w0.reshape(slots, width, units).transpose(1, 0, 2).reshape(width, slots * units)
        return np.ascontiguousarray(by_slot, dtype=np.float32), np.asarray(b0, dtype=np.float32)

    def predict(self, features: np.ndarray) -> np.ndarray:
        """features: (G, D) -> (G,) boundary probabilities."""
        return _sigmoid(self.logits(features))

    def arrays(self) -> dict[str, np.ndarray]:
        named = {"mean": self.mean, "scale": self.scale}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            named[f"w{i}"], named[f"b{i}"] = w, b
        named.update({DELTA_PREFIX + name: factor for name, factor in self.deltas.items()})
        named.update({KEEP_PREFIX + name: indices for name, indices in self.pruning.items()})
        return {k: np.asarray(v, dtype=np.float32) for k, v in named.items()}

    def save(self, folder: str | Path) -> Path:
        """Write `probe.npz` and `meta.json` into `folder` (created if missing) and return it.

        Atomically: the probe is written into a temporary folder beside `folder`, which replaces
        `folder` by a rename once it is complete, so a failed or interrupted save leaves the previous
        folder as it was and no temporary folder behind. Other files of an existing folder are kept
        (linked or copied into the new one); a symbolic link to a folder is followed.
        """

        name = _punctuated_name(self.meta) if self.punctuated is not None else None
        inner = ({} if name is None else {name: self.punctuated}) | self._averaged_by_name()

        def write(new: Path) -> None:
            np.savez(new / ARRAYS, **self.arrays())
            (new / META).write_text(json.dumps(self.meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            for folder_name, probe in inner.items():
                (new / folder_name).mkdir()
                probe.save(new / folder_name)

        given = Path(folder)
        written = (ARRAYS, META, *inner)
        _replace_folder(given.resolve() if given.is_symlink() else given, write, written)
        return given

    def _averaged_by_name(self) -> dict[str, Probe]:
        """The averaged probes by the folder names the meta gives them; a ProbeError when they differ
        in number."""
        names = _averaged_names(self.meta)
        if len(names) != len(self.averaged):
            raise ProbeError(
                f"the probe's meta names {len(names)} averaged probes but it holds {len(self.averaged)}"
            )
        return dict(zip(names, self.averaged, strict=True))

    @classmethod
    def load(cls, folder: str | Path) -> Probe:
        """The probe saved in `folder` (with the punctuated and averaged probes its meta names, from
        inside it); a ProbeError naming the file when one is missing, corrupted or inconsistent."""
        return cls._load(Path(folder), nested=False)

    @classmethod
    def _load(cls, folder: Path, nested: bool) -> Probe:
        """`load`; `nested`: `folder` holds a punctuated or averaged probe, which may not name one of
        its own (a folder linked to its parent would otherwise be read forever)."""
        arrays_path, meta_path = folder / ARRAYS, folder / META
        for path in (arrays_path, meta_path):
            if not path.is_file():
                raise ProbeError(f"probe file {path} is missing; retrain with `segmenter train`")
        try:
            meta = parse_json(read_bytes(meta_path, MAX_JSON_BYTES))
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ProbeError(
                f"probe file {meta_path} is corrupted ({exc}); retrain with `segmenter train`"
            ) from exc
        try:
            if arrays_path.stat().st_size > MAX_ARRAY_BYTES:
                raise ValueError(f"larger than {MAX_ARRAY_BYTES >> 20} MiB")
            with np.load(arrays_path, allow_pickle=False) as data:
                if sum(member.file_size for member in data.zip.infolist()) > MAX_ARRAY_BYTES:
                    raise ValueError(f"its arrays unpack to more than {MAX_ARRAY_BYTES >> 20} MiB")
                arrays = {k: np.asarray(data[k], dtype=np.float32) for k in data.files}
        except Exception as exc:  # zipfile, ValueError, KeyError, OSError: all mean a broken file
            raise ProbeError(
                f"probe file {arrays_path} is corrupted ({exc}); retrain with `segmenter train`"
            ) from exc
        try:
            probe = replace(cls.from_arrays(arrays, meta), source=str(folder))
        except (KeyError, ValueError) as exc:
            raise ProbeError(
                f"probe file {arrays_path} is inconsistent ({exc}); retrain with `segmenter train`"
            ) from exc
        name = _punctuated_name(meta, source=str(meta_path), nested=nested)
        names = _averaged_names(meta, str(meta_path), nested)
        averaged = tuple(cls._load(folder / n, nested=True) for n in names)
        punctuated = None if name is None else cls._load(folder / name, nested=True)
        return replace(probe, punctuated=punctuated, averaged=averaged)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], meta: dict) -> Probe:
        """Rebuild from `arrays()` output; ValueError/KeyError when shapes or values do not fit."""
        mean, scale = arrays["mean"], arrays["scale"]
        weights, biases = [], []
        while f"w{len(weights)}" in arrays:
            weights.append(arrays[f"w{len(weights)}"])
            biases.append(arrays[f"b{len(biases)}"].reshape(-1))
        if not weights:
            raise KeyError("w0")
        width = mean.shape[0]
        if mean.ndim != 1 or scale.shape != mean.shape:
            raise ValueError("mean and scale must be vectors of one length")
        for w, b in zip(weights, biases, strict=True):
            if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
                raise ValueError(f"layer shapes {w.shape} / {b.shape} do not chain from width {width}")
            width = w.shape[1]
        if width != 1:
            raise ValueError("the last layer must have one output")
        values = [mean, scale, *weights, *biases]
        if not all(np.isfinite(v).all() for v in values) or (scale <= 0).any():
            raise ValueError("non-finite values or non-positive scale")
        deltas = {k[len(DELTA_PREFIX) :]: v for k, v in arrays.items() if k.startswith(DELTA_PREFIX)}
        layers_of(deltas)  # ValueError unless the factors pair up
        kept = {k[len(KEEP_PREFIX) :]: v for k, v in arrays.items() if k.startswith(KEEP_PREFIX)}
        pruning = check_keep(kept)  # ValueError unless whole ascending indices
        return cls(mean, scale, tuple(weights), tuple(biases), dict(meta), deltas, pruning)

    def to_bytes(self) -> dict:
        """A msgpack-friendly dict: each array as its shape and little-endian float32 bytes."""
        arrays = {
            k: {"shape": list(v.shape), "data": v.astype("<f4").tobytes()} for k, v in self.arrays().items()
        }
        punctuated = {} if self.punctuated is None else {"punctuated": self.punctuated.to_bytes()}
        averaged = {"averaged": [p.to_bytes() for p in self.averaged]} if self.averaged else {}
        return {"arrays": arrays, "meta": self.meta, **punctuated, **averaged}

    @classmethod
    def from_bytes(cls, data: dict) -> Probe:
        try:
            arrays = {
                k: np.frombuffer(v["data"], dtype="<f4").reshape(v["shape"]).astype(np.float32)
                for k, v in data["arrays"].items()
            }
            probe = cls.from_arrays(arrays, dict(data.get("meta", {})))
        except (KeyError, ValueError, TypeError) as exc:
            raise ProbeError(f"stored probe is inconsistent ({exc}); retrain with `segmenter train`") from exc
        source = "the stored probe's meta"
        names = _averaged_names(probe.meta, source)
        stored = data.get("averaged") or []
        if not isinstance(stored, list) or len(stored) != len(names):
            raise ProbeError(f"{source} names {len(names)} averaged probes but the stored probe holds others")
        averaged = tuple(cls.from_bytes(item) for item in stored)
        punctuated = None
        if data.get("punctuated") is not None:
            _punctuated_name(probe.meta, source=source)
            punctuated = cls.from_bytes(data["punctuated"])
        nested = averaged if punctuated is None else (*averaged, punctuated)
        if any(p.punctuated is not None or p.averaged for p in nested):
            raise ProbeError("a probe stored inside the stored probe names one of its own, which none may")
        return replace(probe, punctuated=punctuated, averaged=averaged)


def _replace_folder(folder: Path, write: Callable[[Path], None], written: tuple[str, ...]) -> None:
    """Replace `folder` by a folder that `write(new)` fills with the files `written`, in one rename
    (`Probe.save`). The other entries of an existing `folder` are carried over into the new one."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    if folder.exists() and not folder.is_dir():
        raise FileExistsError(errno.EEXIST, "a file is in the way of the probe folder", str(folder))
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))  # same file system
    try:
        new, previous = work / "new", work / "previous"
        if folder.is_dir():

            def ignore(directory: str, names: list[str]) -> list[str]:  # the files rewritten, at the top only
                return [name for name in names if name in written] if Path(directory) == folder else []

            shutil.copytree(folder, new, symlinks=True, ignore=ignore, copy_function=_link)
        else:
            new.mkdir()
        write(new)
        if folder.is_dir():
            os.replace(folder, previous)
        try:
            os.replace(new, folder)
        except BaseException:
            if previous.exists():  # put the previous folder back
                os.replace(previous, folder)
            raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _link(source: str, target: str) -> None:
    """Hard-link `source` as `target` (no data copied), or copy it where links are not possible."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _punctuated_name(meta: dict, source: str = "the probe's meta", nested: bool = False) -> str | None:
    """The folder name of the punctuated probe `meta` names (None: it names none); a ProbeError when
    it is not a plain folder name inside the probe's folder, or when `meta` is a punctuated probe's
    (`nested`)."""
    name = meta.get("punctuated_probe")
    if name is None:
        return None
    if nested:
        raise ProbeError(f"{source}: a punctuated probe cannot name one of its own")
    if not is_folder_name(name):
        raise ProbeError(f"{source}: punctuated_probe must name a folder inside the probe's, got {name!r}")
    return name


def _averaged_names(meta: dict, source: str = "the probe's meta", nested: bool = False) -> tuple[str, ...]:
    """The folder names of the averaged probes `meta` names (empty: none); a ProbeError when they are
    not distinct plain folder names inside the probe's folder, or when `meta` is an inner probe's
    (`nested`)."""
    names = meta.get("averaged_probes") or []
    if not names:
        return ()
    if nested:
        raise ProbeError(f"{source}: a probe inside another cannot name averaged probes of its own")
    inside = [*names, meta.get("punctuated_probe")] if isinstance(names, list) else []
    if not isinstance(names, list) or not all(map(is_folder_name, names)) or len(set(inside)) < len(inside):
        raise ProbeError(
            f"{source}: averaged_probes must name distinct folders inside the probe's, other than its "
            f"punctuated probe's, got {names!r}"
        )
    return tuple(names)


@functools.cache
def _blas_libraries() -> threadpoolctl.ThreadpoolController:
    """The thread pools loaded in this process (numpy's BLAS among them), found once: finding them
    reads the process's memory map, about a millisecond, which `threadpool_limits` spends on every call."""
    import threadpoolctl

    return threadpoolctl.ThreadpoolController()


def _sigmoid(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(logits, -40, 40)))


def _tensor(array: np.ndarray) -> torch.Tensor:
    """A float32 torch view of `array` (a copy only when it is not float32 already)."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))
