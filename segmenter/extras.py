"""The optional parts of the package (pip extras), and the one-line error a feature raises without its part.

Core installs segment, topics and the Python API. Each extra in pyproject.toml adds the libraries of one
feature: [spacy] the spaCy component; [analysis] `segmenter analyze` (matplotlib, scipy, scikit-learn);
[train] fitting a probe, `segmenter train` (scikit-learn); [bench] `segmenter bench` and `bench-topics` (the
baseline splitters, spaCy and its small English model, the figures); [ray] `--engine ray`; [int8] ONNX Runtime
for the int8 encoder (`segmenter.encoder.onnx.export`; installed with the core too, since the default presets
run on it where the CPU has VNNI or AVX2: the extra keeps older install commands working); [mpnet] the
12-layer backbone and [multilingual] the multilingual one (their own messages:
`segmenter.encoder.model_store`); [langchain] the LangChain text
splitter (`segmenter.integrations.langchain`); [llamaindex] the LlamaIndex node parser
(`segmenter.integrations.llamaindex`); [tiktoken] chunk budgets counted in an OpenAI encoding
(`tokenizer="cl100k_base"`, with the vocabularies shipped offline).

`require(module, extra, feature)` imports a module where a feature needs it and raises
`MissingExtraError`, "<feature> needs the [<extra>] extra: pip install 'attention-segmenter[<extra>]'",
when the module (or a module it imports) is missing. `require_installed` says the same before any work
starts, without importing anything (for checks whose imports would change what is measured later).
Which modules a feature needs is said where the feature is; this module knows only the message.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from types import ModuleType

from segmenter.errors import MissingExtraError

DISTRIBUTION = "attention-segmenter"


def missing_extra(extra: str, feature: str) -> MissingExtraError:
    """The error that says `feature` needs `extra`, and the pip command that installs it."""
    return MissingExtraError(f"{feature} needs the [{extra}] extra: pip install '{DISTRIBUTION}[{extra}]'")


def require(module: str, extra: str, feature: str) -> ModuleType:
    """`module`, imported; `MissingExtraError` (naming `extra`) when it or a module it needs is missing.

    >>> require("json", "spacy", "the spaCy component").__name__
    'json'
    >>> require("no_such_module", "spacy", "the spaCy component")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    segmenter.errors.MissingExtraError: the spaCy component needs the [spacy] extra: pip install '...[spacy]'
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise missing_extra(extra, feature) from exc


def require_installed(modules: Iterable[str], extra: str, feature: str) -> None:
    """`MissingExtraError` (naming `extra`) unless every one of the top-level `modules` can be found; none
    is imported."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ValueError:  # in sys.modules without a spec: it is there
            found = True
        except ImportError:  # a finder that refuses it
            found = False
        if not found:
            raise missing_extra(extra, feature)
