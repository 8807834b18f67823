"""Sentence segmentation from the attention heads of a BERT-family encoder.

>>> from segmenter import Segmenter
>>> Segmenter().split("It rained all day. We stayed in.")
['It rained all day.', 'We stayed in.']

Names are imported lazily, so `import segmenter` (and spaCy's entry-point scan) does not load torch.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "Segmenter": "segmenter.api",
    "TopicSegmenter": "segmenter.topics.segmenter",
    "Span": "segmenter.decode.decoder",
    "Chunk": "segmenter.chunking.chunker",
    "Chunker": "segmenter.chunking.chunker",
    "ChunkConfig": "segmenter.chunking.config",
    "Encoder": "segmenter.encoder.torch.encoder",
    "SegmenterConfig": "segmenter.config",
    "DecodeConfig": "segmenter.config",
    "FeatureConfig": "segmenter.config",
    "WindowConfig": "segmenter.config",
    "SegmenterError": "segmenter.errors",
    "ConfigError": "segmenter.errors",
    "InputError": "segmenter.errors",
    "ModelNotFoundError": "segmenter.errors",
    "ProbeError": "segmenter.errors",
    "UnsupportedModelError": "segmenter.errors",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'segmenter' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
