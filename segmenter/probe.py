"""A linear boundary probe: fit with scikit-learn, store as plain arrays, predict with numpy.

On disk a probe is a folder with `probe.npz` (arrays only, loaded with allow_pickle=False) and
`meta.json` (human-readable: backbone, layers, window, features, threshold, training data, scores).
Inference needs numpy only; scikit-learn is imported by `fit` alone. Feature extraction lives elsewhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from segmenter.errors import ProbeError

ARRAYS = "probe.npz"
META = "meta.json"


@dataclass(frozen=True)
class Probe:
    """p(boundary | x) = sigmoid(((x - mean) / scale) . weights + bias).

    mean, scale, weights: (D,) float32; bias: float; meta: free-form JSON-able description.
    """

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    meta: dict = field(default_factory=dict)

    @property
    def dimension(self) -> int:
        return int(self.weights.shape[0])

    def logits(self, features: np.ndarray) -> np.ndarray:
        """features: (G, D) -> (G,) log-odds of a boundary."""
        if features.shape[-1] != self.dimension:
            raise ProbeError(
                f"probe expects {self.dimension} features per gap, got {features.shape[-1]}; "
                "it was trained for another backbone or layer set"
            )
        return ((features - self.mean) / self.scale) @ self.weights + self.bias

    def predict(self, features: np.ndarray) -> np.ndarray:
        """features: (G, D) -> (G,) boundary probabilities."""
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(features), -40, 40)))

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(
            folder / ARRAYS,
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
            weights=self.weights.astype(np.float32),
            bias=np.asarray([self.bias], dtype=np.float32),
        )
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
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProbeError(
                f"probe file {meta_path} is corrupted ({exc}); retrain with `segmenter train`"
            ) from exc
        try:
            with np.load(arrays_path, allow_pickle=False) as data:
                arrays = {
                    k: np.asarray(data[k], dtype=np.float32) for k in ("mean", "scale", "weights", "bias")
                }
        except Exception as exc:  # zipfile, ValueError, KeyError, OSError: all mean a broken file
            raise ProbeError(
                f"probe file {arrays_path} is corrupted ({exc}); retrain with `segmenter train`"
            ) from exc
        d = arrays["weights"].shape
        if len(d) != 1 or arrays["mean"].shape != d or arrays["scale"].shape != d or arrays["bias"].size != 1:
            raise ProbeError(
                f"probe file {arrays_path} has inconsistent array shapes; retrain with `segmenter train`"
            )
        if not all(np.isfinite(a).all() for a in arrays.values()) or (arrays["scale"] <= 0).any():
            raise ProbeError(f"probe file {arrays_path} holds non-finite or invalid values; retrain it")
        return cls(arrays["mean"], arrays["scale"], arrays["weights"], float(arrays["bias"][0]), meta)

    def to_bytes(self) -> dict:
        """A JSON/msgpack-friendly dict of lists (for spaCy serialisation)."""
        return {
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
            "meta": self.meta,
        }

    @classmethod
    def from_bytes(cls, data: dict) -> Probe:
        return cls(
            np.asarray(data["mean"], dtype=np.float32),
            np.asarray(data["scale"], dtype=np.float32),
            np.asarray(data["weights"], dtype=np.float32),
            float(data["bias"]),
            dict(data.get("meta", {})),
        )


def fit(features: np.ndarray, labels: np.ndarray, c: float = 0.1, meta: dict | None = None) -> Probe:
    """Fit a standardised L2 logistic regression.

    features: (G, D) float32; labels: (G,) 0/1; c: inverse regularisation strength.
    """
    from sklearn.linear_model import LogisticRegression

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale = np.where(scale > 1e-6, scale, 1.0)
    model = LogisticRegression(C=c, max_iter=2000, solver="lbfgs")
    model.fit((features - mean) / scale, labels)
    return Probe(
        mean.astype(np.float32),
        scale.astype(np.float32),
        model.coef_[0].astype(np.float32),
        float(model.intercept_[0]),
        dict(meta or {}),
    )
