"""The dependency between the library and its benchmark harness runs one way: harness -> library.

The harness (`segmenter.bench`, the repository's `benchmarks/` folder) may import any library module;
no library module (everything under `segmenter/`) imports the harness, at module level or inside a
function. grimp cannot see this edge (the harness is a subpackage that lives outside `segmenter/` on
disk, so grimp drops imports of it), so the static check reads the import statements with `ast`; a
second check imports every library module and loads a dataset, and finds no harness module loaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "segmenter"
HARNESS = ("segmenter.bench", "benchmarks")  # its installed name, and the folder's name in a checkout


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module an import statement of `path` (a file under `root`) names (`from A import b` names A
    and A.b), wherever the statement is, except under `if TYPE_CHECKING:`."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return found


def _is_harness(name: str) -> bool:
    return any(name == h or name.startswith(f"{h}.") for h in HARNESS)


def test_import_scan_sees_imports_inside_functions_and_relative_ones(tmp_path):
    package = tmp_path / "segmenter"
    package.mkdir()
    sample = package / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import segmenter.bench.runner\n"
        "def f():\n    from segmenter.bench.cli import bench\n"
        "from . import bench\n",
        encoding="utf-8",
    )
    names = imported_modules(sample, root=tmp_path)
    assert {"segmenter.bench.cli", "segmenter.bench"} <= names
    assert "segmenter.bench.runner" not in names


def test_no_library_module_imports_the_harness():
    offenders = {
        _module_name(path): sorted(name for name in imported_modules(path) if _is_harness(name))
        for path in sorted(LIBRARY.rglob("*.py"))
    }
    assert {module: names for module, names in offenders.items() if names} == {}


def test_the_library_loads_no_harness_module():
    """Every library module imported (the CLI with its command list too) and a built-in dataset read:
    nothing of the harness is in sys.modules."""
    script = (
        "import importlib, pkgutil, sys, segmenter\n"
        "for info in pkgutil.walk_packages(segmenter.__path__, 'segmenter.'):\n"
        "    importlib.import_module(info.name)\n"
        "from segmenter.gold.specs import load_dataset\n"
        "load_dataset('golden-rules'); load_dataset('ewt-dev')\n"
        "import segmenter.cli.main\n"
        "segmenter.cli.main.main.list_commands(None)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('segmenter.bench', 'benchmarks'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
