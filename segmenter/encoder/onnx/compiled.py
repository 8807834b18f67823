"""An int8 encoder that starts without torch: the tokenizer and a cached ONNX Runtime graph.

Importing torch takes most of two seconds, longer than a short text takes to segment. With `precision="int8"`
the whole encoder (embeddings and blocks) runs as one ONNX Runtime graph, so once the graph of a backbone with
a probe's deltas and pruning is in the cache (`segmenter.encoder.onnx.export`, built by the first run, through
torch), `segmenter.encoder.loader.open_encoder` writes beside it a small entry, `compiled-<key>.json`: the
model's sizes and special token ids, where its tokenizer is, and which graph to run. Later runs find the entry
by a key made of what went into the graph (the model folder's files, the deltas and pruning, the blocks kept,
the calibration text and the library versions) and build a `CompiledEncoder` from it: the fast tokenizer and
the graph's session, the same graph the torch encoder at int8 runs
(`segmenter.encoder.torch.encoder.Encoder`), so the outputs are the same bit for bit. It returns block outputs
only, which is all an int8 encoder can give. Anything the entry does not match (another model, other weights,
a graph deleted from the cache) falls back to the torch path, which writes a new entry.

Left out: the float precisions (their blocks run in torch) and models that do not load through
`segmenter.encoder.torch.bert` (int8 refuses them).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np

from segmenter.encoder.backbones import locate
from segmenter.encoder.onnx.runtime import (
    CALIBRATION_TEXT,
    GRAPH_VERSION,
    SMOOTHING,
    Int8Session,
    cache_dir,
    graph_path,
    refuse_inside_reads,
)
from segmenter.text.tokens import Capture, Tokens, joins, tokenize, wanted_layers

ENTRY_VERSION = "1"  # part of the key: bump when an entry's fields change
_MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
_WEIGHTS = "model.safetensors"


def entry_key(
    model: str | None, max_layer: int, deltas: dict[str, np.ndarray], pruning: dict[str, np.ndarray]
) -> str | None:
    """sha256 of everything the int8 encoder of these settings depends on, or None where `model` is not
    a folder with safetensors weights (no entry then). The weights file counts by size and modification
    time (reading 90 MB to hash it would cost what the entry saves); every other input by content."""
    _name, source = locate(model)
    folder = Path(source)
    weights = folder / _WEIGHTS
    try:
        stat = weights.stat()  # an OSError unless `folder` is a folder holding the weights
        digest = hashlib.sha256()
        versions = [_version(name) for name in ("torch", "onnxruntime", "attention-segmenter")]
        digest.update(f"{ENTRY_VERSION} {GRAPH_VERSION} {SMOOTHING} {versions} {max_layer}".encode())
        digest.update(f"{weights.resolve()} {stat.st_size} {stat.st_mtime_ns}".encode())
        for name in _MODEL_FILES:
            path = folder / name
            digest.update(name.encode() + (path.read_bytes() if path.is_file() else b"-"))
        digest.update(CALIBRATION_TEXT.read_bytes())
    except OSError:
        return None
    for kind, arrays in (("delta", deltas), ("keep", pruning)):
        for name in sorted(arrays):
            array = np.ascontiguousarray(arrays[name])
            digest.update(f"{kind} {name} {array.shape} {array.dtype}".encode())
            digest.update(array.tobytes())
    return digest.hexdigest()[:32]


def entry_path(key: str) -> Path:
    return cache_dir() / f"compiled-{key}.json"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "-"


def write_entry(key: str, encoder) -> None:
    """Record `encoder` (a torch `Encoder` at int8 whose graph is cached) under `key`; nothing where
    the graph could not be cached or the cache cannot be written."""
    graph = None if encoder.int8_graph_key is None else graph_path(encoder.int8_graph_key)
    if graph is None or not graph.is_file():
        return
    entry = {
        "name": encoder.name,
        "graph": graph.name,
        "tokenizer": str((Path(encoder.source) / "tokenizer.json").resolve()),
        "sizes": {
            name: getattr(encoder, name)
            for name in ("n_layers", "loaded_layers", "n_heads", "hidden_size", "head_dim", "max_positions")
        },
        "special_ids": {name: getattr(encoder, name) for name in ("cls_id", "sep_id", "pad_id", "unk_id")},
    }
    path = entry_path(key)
    try:
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".part", delete=False) as handle:
            json.dump(entry, handle, indent=1)
        os.replace(handle.name, path)  # whole or absent
    except OSError:
        pass


class CompiledEncoder:
    """The int8 encoder of a cache entry: the parts of `segmenter.encoder.torch.encoder.Encoder` that
    segmenting at int8 reads (tokenize, joins, forward for block outputs, the sizes and special token ids)."""

    precision = "int8"

    def __init__(self, entry: dict, graph: bytes):
        from tokenizers import Tokenizer

        self.name = str(entry["name"])
        for name, value in entry["sizes"].items():
            setattr(self, name, int(value))
        for name, value in entry["special_ids"].items():
            setattr(self, name, None if value is None else int(value))
        self._backend = Tokenizer.from_file(entry["tokenizer"])
        self._backend.no_truncation()
        self._backend.no_padding()
        self._blocks = Int8Session(graph, self.loaded_layers, self.hidden_size)

    @classmethod
    def load(cls, key: str) -> CompiledEncoder | None:
        """The encoder of entry `key`, or None where the entry, its graph or its files are missing,
        unreadable or stale."""
        try:
            entry = json.loads(entry_path(key).read_text(encoding="utf-8"))
            graph = (cache_dir() / Path(entry["graph"]).name).read_bytes()
            return cls(entry, graph)
        except Exception:  # OSError, a malformed entry, a tokenizers error on a changed file:
            return None  # the torch path decides (and says what is wrong)

    def tokenize(self, text: str) -> Tokens:
        """Tokenize `text` without special tokens (`segmenter.text.tokens.tokenize`)."""
        return tokenize(self._backend, text)

    def joins(self, left: str, right: str) -> bool:
        """`segmenter.text.tokens.joins` with this encoder's tokenizer."""
        return joins(self._backend, left, right)

    def forward(
        self,
        input_ids: np.ndarray,
        attention_mask: np.ndarray,
        layers: tuple[int, ...],
        attention_layers: tuple[int, ...] = (),
        contexts: bool = True,
        hidden: bool = False,
        summary_layers: tuple[int, ...] = (),
    ) -> Capture:
        """Block outputs of `layers` for a batch (see `segmenter.encoder.torch.encoder.Encoder.forward`);
        attention and per-head vectors are refused, as by the torch encoder at int8."""
        wanted_layers(self.name, self.loaded_layers, layers, attention_layers, summary_layers)
        refuse_inside_reads(layers, attention_layers, contexts, summary_layers)
        return self._blocks.capture(input_ids, attention_mask, layers, hidden)
