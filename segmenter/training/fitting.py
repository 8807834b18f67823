"""Fitting a boundary probe with scikit-learn: `fit` one probe on a feature matrix, `average` MLPs
fitted with different seeds into one wider MLP (their mean logit).

`fit` standardises the features with their mean and scale, fits a `logistic` (L2 logistic regression)
or an `mlp` (one ReLU hidden layer, early stopping) model with denormal floats flushed to zero, and
returns its weights as a `segmenter.probe.probe.Probe`. scikit-learn is imported here alone (the
[train] extra; `segmenter.extras.require` names it when it is missing).
Leaves out: the probe itself, its inference, saving and loading (`segmenter.probe.probe`), gap
features, labels, thresholds and meta (`segmenter.training.probe`), and tuning the encoder with its
probe (`segmenter.training.tune`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np

from segmenter.extras import require
from segmenter.probe.probe import KINDS, Probe


def fit(
    features: np.ndarray,
    labels: np.ndarray,
    kind: str = "logistic",
    c: float = 0.005,
    hidden: int = 128,
    seed: int = 0,
    meta: dict | None = None,
    in_place: bool = False,
) -> Probe:
    """Fit a probe on standardised features.

    features: (G, D) float32; labels: (G,) 0/1. in_place: standardise `features` itself instead of a
    copy (the caller gives them up: no second copy of a large feature matrix is held).
    logistic: L2 logistic regression with inverse strength `c`.
    mlp:      `hidden` ReLU units, L2 penalty alpha = 5e-5 / c (0.01 at the default c; larger c means
              less regularisation for both kinds), early stopping on a 10% split.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown probe kind {kind!r}; choose one of {', '.join(KINDS)}")
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale = np.where(scale > 1e-6, scale, 1.0)
    x = features if in_place else features.copy()
    x -= mean
    x /= scale
    require("sklearn", "train", "training a probe")
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression

        with _flushing_denormals():
            model = LogisticRegression(C=c, max_iter=3000, solver="lbfgs").fit(x, labels)
        weights, biases = (model.coef_.T,), (model.intercept_,)
    else:
        from sklearn.neural_network import MLPClassifier

        with _flushing_denormals():
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


def average(members: Sequence[Probe], meta: dict | None = None) -> Probe:
    """One MLP probe whose logit is the mean of `members`' logits (an ensemble at the cost of one
    wider hidden layer): their hidden units side by side, their output weights divided by their count.

    Every member must be a one-hidden-layer MLP with the same standardisation (fitted on the same
    features).
    """
    if not members:
        raise ValueError("average needs at least one probe")
    first = members[0]
    for member in members:
        if len(member.weights) != 2:
            raise ValueError("only one-hidden-layer MLP probes can be averaged")
        if not (np.array_equal(member.mean, first.mean) and np.array_equal(member.scale, first.scale)):
            raise ValueError("probes fitted on different features cannot be averaged")
    k = len(members)
    w0 = np.concatenate([m.weights[0] for m in members], axis=1)  # (D, k * H0)
    b0 = np.concatenate([m.biases[0] for m in members])  # (k * H0,)
    w1 = (np.concatenate([m.weights[1] for m in members], axis=0) / k).astype(np.float32)  # (k * H0, 1)
    b1 = np.mean([m.biases[1] for m in members], axis=0).astype(np.float32)  # (1,)
    return Probe(first.mean, first.scale, (w0, w1), (b0, b1), dict(meta or {}))


@contextlib.contextmanager
def _flushing_denormals():
    """Run a fit with denormal floats flushed to zero, on one BLAS thread.

    The L2 penalty shrinks the weights of inputs that carry nothing (a flag that never fires, a
    standardised constant) geometrically, down into denormal floats, and every matrix product with
    them then takes the CPU's slow path: on the train splits' frozen MPNet features a scikit-learn MLP
    epoch averaged 3 minutes (9 epochs in 28) against about 7 s flushed. Flushing is a per-thread CPU
    setting, which BLAS threads started earlier do not share, so the fit runs its products on the calling
    thread alone. torch has no getter for the setting, so it is switched off afterwards.
    """
    import torch
    from threadpoolctl import threadpool_limits  # installed with scikit-learn

    flushing = torch.set_flush_denormal(True)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        if flushing:
            torch.set_flush_denormal(False)
