"""Run an int8 graph of an encoder's blocks in ONNX Runtime, and where such graphs are kept.

`Int8Session(graph, layers, width)` runs the serialised graph that `segmenter.encoder.onnx.export` builds
(token ids and masks of windows in, every block's output out) one window per run, each cut to its real tokens:
the graph quantises activations with one scale per run, so in a shared batch a window's outputs would depend
on its neighbours and on the padding; alone they depend on the window only. With `threads` threads, that many
windows run at once, each on one thread (idle threads sleep). Sessions open without the optimiser fusions in
`DISABLED_FUSIONS`, which made the graph slower. `cache_dir` is the folder graphs (and
`segmenter.encoder.onnx.compiled` entries) are kept in. This module imports neither torch nor the `onnx`
package: building graphs is `segmenter.encoder.onnx.export`'s.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from segmenter.errors import ConfigError
from segmenter.extras import require
from segmenter.text.tokens import Capture

GRAPH_VERSION = "3"  # part of every cache key: bump when the exported graph changes
CALIBRATION_TEXT = Path(__file__).parent / "int8_calibration.txt"  # what smoothing reads
SMOOTHING = 0.8  # SmoothQuant's exponent (docs/model-selection.md, "int8"); None: no smoothing
# ONNX Runtime graph fusions left out when a session opens: its fused SkipLayerNormalization ran about
# eight times as long as the Add and LayerNormalization it replaces (docs/model-selection.md, "int8 without
# ONNX Runtime's SkipLayerNormalization fusion"; `training/int8_fusions.py` measures it)
DISABLED_FUSIONS = ("SkipLayerNormFusion",)


def cache_dir() -> Path:
    """$SEGMENTER_CACHE, else $XDG_CACHE_HOME/attention-segmenter, else ~/.cache/attention-segmenter."""
    if os.environ.get("SEGMENTER_CACHE"):
        return Path(os.environ["SEGMENTER_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-segmenter"


def graph_path(key: str) -> Path:
    """Where the int8 graph of the blocks whose weights hash to `key` is kept."""
    return cache_dir() / f"int8-{key}.onnx"


def default_threads() -> int:
    """The intra-op threads the encoder runs on: torch's count where torch is loaded (the command line's
    and the benchmark's thread settings go through it), else OMP_NUM_THREADS (which torch would read),
    else the CPUs this process may run on."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.get_num_threads())
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        pass
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class Int8Session:
    """The int8 graph `graph` (serialised ONNX) of `layers` blocks of width `width`, run in ONNX Runtime
    on the CPU.

    One session on one intra-op thread; with more threads, that many windows run at once (ONNX Runtime
    sessions take concurrent runs, and release the GIL while they run). A window's products then
    never split across threads, so its outputs are the same at any thread count."""

    def __init__(self, graph: bytes, layers: int, width: int):
        self._ort = require("onnxruntime", "int8", "precision 'int8'")
        self.graph, self.layers, self.width = graph, layers, width
        self.disabled_fusions = DISABLED_FUSIONS  # read when the session opens (on the first run)
        self._session = None
        self._pool: ThreadPoolExecutor | None = None
        self._threads = 1
        self._pid = os.getpid()

    def __call__(self, input_ids: np.ndarray, mask: np.ndarray, threads: int) -> np.ndarray:
        """input_ids, mask (B, T) int64 with each row's real tokens first -> (L, B, T, D) float32
        block outputs, zero at padding; each row runs alone, up to `threads` rows at once."""
        if os.getpid() != self._pid:  # a forked child: the parent's pool threads are not here
            self._session, self._pool, self._threads, self._pid = None, None, 1, os.getpid()
        if self._session is None:
            self._session = self._open()
        if threads != self._threads:
            if self._pool is not None:
                self._pool.shutdown()
            self._pool = ThreadPoolExecutor(threads, "int8-windows") if threads > 1 else None
            self._threads = threads
        lengths = mask.sum(axis=1).tolist()  # (B,)
        outputs = np.zeros((self.layers, *input_ids.shape, self.width), dtype=np.float32)  # (L, B, T, D)

        def run(row: int) -> None:
            length = lengths[row]
            feed = {
                "input_ids": np.ascontiguousarray(input_ids[row : row + 1, :length], dtype=np.int64),
                "mask": np.ones((1, length), dtype=np.int64),
            }
            outputs[:, row, :length] = self._session.run(None, feed)[0][:, 0]  # (L, length, D)

        if self._pool is None or len(lengths) == 1:
            for row in range(len(lengths)):
                run(row)
        else:
            list(self._pool.map(run, range(len(lengths))))  # list(): waits, and raises what a run raised
        return outputs

    def capture(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, layers: tuple[int, ...], hidden: bool
    ) -> Capture:
        """What `Encoder.forward` returns for block outputs, on `default_threads()`: those of `layers`
        (when `hidden`). Callers refuse requests for more (`refuse_inside_reads`)."""
        ids, mask = np.asarray(input_ids, dtype=np.int64), np.asarray(attention_mask, dtype=np.int64)
        outputs = self(ids, mask, default_threads())  # (L_loaded, B, T, D)
        hid = outputs[[layer - 1 for layer in layers]] if hidden and layers else None  # (L, B, T, D)
        return Capture(layers=tuple(layers), contexts=None, attentions=None, hidden=hid)

    def _open(self):
        options = self._ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only
        return self._ort.InferenceSession(
            self.graph,
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(self.disabled_fusions),
        )


def refuse_inside_reads(
    layers: tuple[int, ...],
    attention_layers: tuple[int, ...],
    contexts: bool,
    summary_layers: tuple[int, ...],
) -> None:
    """A ConfigError where a forward request (`Encoder.forward`'s arguments) reads attention or
    per-head vectors, which the int8 graph does not return."""
    if attention_layers or summary_layers or (contexts and layers):
        raise ConfigError(
            "precision 'int8' returns block outputs only, not attention or per-head vectors; "
            "use --precision auto"
        )
