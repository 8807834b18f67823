"""training/ud_languages.py: extraction of UD treebanks from a bare mirror, and their manifest."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CONLLU = """# newdoc id = d1
# sent_id = 1
# text = Hallo Welt.
1\tHallo\thallo\tINTJ\t_\t_\t0\troot\t_\t_
2\tWelt\tWelt\tNOUN\t_\t_\t1\tvocative\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

# sent_id = 2
# text = Gut.
1\tGut\tgut\tADJ\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


def _script():
    spec = importlib.util.spec_from_file_location("ud_languages", ROOT / "training" / "ud_languages.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ud_languages"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _mirror(root: Path, name: str) -> Path:
    """A bare repository shaped like the fetch tool's mirror of a UD treebank, with a dev file only."""
    work = root / "work"
    work.mkdir()
    (work / "README.md").write_text("# Summary\n\n# Metadata\n\nLicense: CC BY-SA 4.0\n", encoding="utf-8")
    (work / "xx_test-ud-dev.conllu").write_text(CONLLU, encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    subprocess.run([*git, "-C", str(work), "add", "."], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-q", "-m", "data"], check=True)
    bare = root / "mirrors" / f"UniversalDependencies+{name}" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return root / "mirrors"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_extracts_files_and_writes_manifest_with_commit_licence_and_counts(tmp_path):
    module = _script()
    mirrors = _mirror(tmp_path, "UD_Test-XX")
    treebank = module.Treebank("UD_Test-XX", "xx", "Testic", "Latin", "main")
    row = module.extract(treebank, mirrors, tmp_path / "out")
    assert (tmp_path / "out" / "UD_Test-XX" / "xx_test-ud-dev.conllu").read_text(encoding="utf-8") == CONLLU
    assert row["licence"] == "CC BY-SA 4.0" and len(row["commit"]) == 40
    assert row["files"] == {"dev": [("xx_test-ud-dev.conllu", (2, 1))]}
    text = module.manifest([row], tmp_path / "out")
    assert "| xx | [UD_Test-XX](https://github.com/UniversalDependencies/UD_Test-XX) | main |" in text
    assert "| none upstream | 2 sent / 1 docs | none upstream |" in text


def test_missing_mirror_is_recorded_not_fatal(tmp_path):
    module = _script()
    row = module.extract(module.Treebank("UD_None-X", "xx", "f", "s", "main"), tmp_path, tmp_path / "out")
    assert row["files"] == {} and "no mirror" in row["note"]


def test_refuses_an_output_folder_inside_the_repository():
    with pytest.raises(SystemExit):
        _script().main([str(ROOT / "ud-data")])
