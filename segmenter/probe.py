"""A boundary probe: fit with scikit-learn, store as plain arrays, predict with numpy.

Two kinds share one format: `logistic` (one linear layer) and `mlp` (one ReLU hidden layer, then a
linear output). Inputs are standardised with the training mean and scale. On disk a probe is a folder
with `probe.npz` (arrays only, loaded with allow_pickle=False) and `meta.json` (human-readable:
backbone, layers, window, features, threshold, training data, scores). Inference needs numpy only;
scikit-learn is imported by `fit` alone. Feature extraction lives elsewhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from segmenter.errors import ProbeError

ARRAYS = "probe.npz"
META = "meta.json"
KINDS = ("logistic", "mlp")


@dataclass(frozen=True)
class Probe:
    """p(boundary | x) = sigmoid(f((x - mean) / scale)), f a stack of dense layers with ReLU between.

    mean, scale: (D,) float32
    weights:     per layer (D_in, D_out) float32; the last layer has D_out = 1
    biases:      per layer (D_out,) float32
    meta:        free-form JSON-able description
    source:      the folder it was loaded from (None when built in memory); not saved
    """

    mean: np.ndarray
    scale: np.ndarray
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    meta: dict = field(default_factory=dict)
    source: str | None = None

    @property
    def dimension(self) -> int:
        return int(self.mean.shape[0])

    def logits(self, features: np.ndarray) -> np.ndarray:
        """features: (G, D) -> (G,) log-odds of a boundary."""
        if features.shape[-1] != self.dimension:
            raise ProbeError(
                f"probe expects {self.dimension} features per gap, got {features.shape[-1]}; "
                "it was trained for another backbone or feature set"
            )
        x = (features - self.mean) / self.scale  # (G, D)
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = x @ w + b
            if i < len(self.weights) - 1:
                np.maximum(x, 0.0, out=x)
        return x[:, 0]

    def predict(self, features: np.ndarray) -> np.ndarray:
        """features: (G, D) -> (G,) boundary probabilities."""
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(features), -40, 40)))

    def arrays(self) -> dict[str, np.ndarray]:
        named = {"mean": self.mean, "scale": self.scale}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            named[f"w{i}"], named[f"b{i}"] = w, b
        return {k: np.asarray(v, dtype=np.float32) for k, v in named.items()}

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / ARRAYS, **self.arrays())
        (folder / META).write_text(json.dumps(self.meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> Probe:
        folder = Path(folder)
        arrays_path, meta_path = folder / ARRAYS, folder / META
        for path in (arrays_path, meta_path):
            if not path.is_file():
                raise ProbeError(f"probe file {path} is missing; retrain with `segmenter train`")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ProbeError(
                f"probe file {meta_path} is corrupted ({exc}); retrain with `segmenter train`"
            ) from exc
        try:
            with np.load(arrays_path, allow_pickle=False) as data:
                arrays = {k: np.asarray(data[k], dtype=np.float32) for k in data.files}
        except Exception as exc:  # zipfile, ValueError, KeyError, OSError: all mean a broken file
            raise ProbeError(
                f"probe file {arrays_path} is corrupted ({exc}); retrain with `segmenter train`"
            ) from exc
        try:
            return replace(cls.from_arrays(arrays, meta), source=str(folder))
        except (KeyError, ValueError) as exc:
            raise ProbeError(
                f"probe file {arrays_path} is inconsistent ({exc}); retrain with `segmenter train`"
            ) from exc

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
        return cls(mean, scale, tuple(weights), tuple(biases), dict(meta))

    def to_bytes(self) -> dict:
        """A msgpack-friendly dict: each array as its shape and little-endian float32 bytes."""
        arrays = {
            k: {"shape": list(v.shape), "data": v.astype("<f4").tobytes()} for k, v in self.arrays().items()
        }
        return {"arrays": arrays, "meta": self.meta}

    @classmethod
    def from_bytes(cls, data: dict) -> Probe:
        arrays = {
            k: np.frombuffer(v["data"], dtype="<f4").reshape(v["shape"]).astype(np.float32)
            for k, v in data["arrays"].items()
        }
        return cls.from_arrays(arrays, dict(data.get("meta", {})))


def fit(
    features: np.ndarray,
    labels: np.ndarray,
    kind: str = "logistic",
    c: float = 0.005,
    hidden: int = 128,
    seed: int = 0,
    meta: dict | None = None,
) -> Probe:
    """Fit a probe on standardised features.

    features: (G, D) float32; labels: (G,) 0/1.
    logistic: L2 logistic regression with inverse strength `c`.
    mlp:      `hidden` ReLU units, L2 penalty alpha = 5e-5 / c (0.01 at the default c; larger c means
              less regularisation for both kinds), early stopping on a 10% split.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown probe kind {kind!r}; choose one of {', '.join(KINDS)}")
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale = np.where(scale > 1e-6, scale, 1.0)
    x = (features - mean) / scale
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=c, max_iter=3000, solver="lbfgs").fit(x, labels)
        weights, biases = (model.coef_.T,), (model.intercept_,)
    else:
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier(
            hidden_layer_sizes=(hidden,),
            alpha=5e-5 / c,
            early_stopping=True,
            max_iter=60,
            batch_size=max(1, min(512, int(0.9 * len(labels)))),  # early stopping keeps 90% to train
            random_state=seed,
        ).fit(x, labels)
        weights, biases = tuple(model.coefs_), tuple(model.intercepts_)
    return Probe(
        mean.astype(np.float32),
        scale.astype(np.float32),
        tuple(np.asarray(w, dtype=np.float32) for w in weights),
        tuple(np.asarray(b, dtype=np.float32).reshape(-1) for b in biases),
        dict(meta or {}),
    )
