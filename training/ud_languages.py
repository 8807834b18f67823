"""Extract the UD treebanks of the multilingual benchmark into a folder outside the repository, and write
their manifest.

    python training/ud_languages.py /work/ud-multi [--mirrors /work/.mirror]
        [--manifest benchmarks/data/ud_multilingual/MANIFEST.md]

Each treebank is read from a bare git mirror of its public repository
(`MIRRORS/UniversalDependencies+UD_<Name>/repo`, as the session's `fetch` tool leaves it for
`github:UniversalDependencies/UD_<Name>`). Its `*-ud-{train,dev,test}*.conllu` files at HEAD are written,
unchanged, to `OUT/UD_<Name>/`; a file the snapshot lists but does not hold (the mirrors leave out files
of about 4 MB and more) is recorded as absent instead. The manifest (Markdown) gives per treebank: the
language, family and script, the repository and commit, the licence (the README's `License:` line), and
per split the file's sentences and `# newdoc` documents, or why it is missing. The CoNLL-U files
themselves never go into the repository (../shared/data/README.md, rules of use).

Role of each treebank: `main` treebanks are benchmarked on dev and test; `train-only` ones add train
text (for a language whose main treebank's train file is absent, or for a language of its own);
`test-only` ones (PUD: 1,000 sentences, test only) give a test score where no main treebank could be
read; `unavailable` ones were asked for but the snapshot holds none of their files.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SPLITS = ("train", "dev", "test")
DEFAULT_MANIFEST = Path(__file__).resolve().parents[1] / "benchmarks/data/ud_multilingual/MANIFEST.md"


@dataclass(frozen=True)
class Treebank:
    name: str  # UD_<Language>-<Corpus>
    code: str  # ISO 639-1
    family: str
    script: str
    role: str  # main, train-only, test-only, unavailable


TREEBANKS = (
    Treebank("UD_German-GSD", "de", "Indo-European (Germanic)", "Latin", "main"),
    Treebank("UD_French-GSD", "fr", "Indo-European (Romance)", "Latin", "main"),
    Treebank("UD_Spanish-GSD", "es", "Indo-European (Romance)", "Latin", "main"),
    Treebank("UD_Portuguese-Bosque", "pt", "Indo-European (Romance)", "Latin", "main"),
    Treebank("UD_Italian-ISDT", "it", "Indo-European (Romance)", "Latin", "main"),
    Treebank("UD_Russian-GSD", "ru", "Indo-European (Slavic)", "Cyrillic", "main"),
    Treebank("UD_Polish-PDB", "pl", "Indo-European (Slavic)", "Latin", "main"),
    Treebank("UD_Greek-GDT", "el", "Indo-European (Hellenic)", "Greek", "main"),
    Treebank("UD_Persian-Seraji", "fa", "Indo-European (Iranian)", "Arabic", "main"),
    Treebank("UD_Finnish-TDT", "fi", "Uralic", "Latin", "main"),
    Treebank("UD_Turkish-IMST", "tr", "Turkic", "Latin", "main"),
    Treebank("UD_Hebrew-HTB", "he", "Afro-Asiatic (Semitic)", "Hebrew", "main"),
    Treebank("UD_Korean-GSD", "ko", "Koreanic", "Hangul", "main"),
    Treebank("UD_Chinese-GSD", "zh", "Sino-Tibetan", "Han (unspaced)", "main"),
    Treebank("UD_Japanese-GSD", "ja", "Japonic", "Kanji/kana (unspaced)", "main"),
    Treebank("UD_Marathi-UFAL", "mr", "Indo-European (Indo-Aryan)", "Devanagari", "main"),
    Treebank("UD_Arabic-PUD", "ar", "Afro-Asiatic (Semitic)", "Arabic", "test-only"),
    Treebank("UD_Hindi-PUD", "hi", "Indo-European (Indo-Aryan)", "Devanagari", "test-only"),
    Treebank("UD_French-Sequoia", "fr", "Indo-European (Romance)", "Latin", "train-only"),
    Treebank("UD_Italian-ParTUT", "it", "Indo-European (Romance)", "Latin", "train-only"),
    Treebank("UD_Russian-Taiga", "ru", "Indo-European (Slavic)", "Cyrillic", "train-only"),
    Treebank("UD_Hungarian-Szeged", "hu", "Uralic", "Latin", "train-only"),
    Treebank("UD_Vietnamese-VTB", "vi", "Austroasiatic", "Latin (syllables spaced)", "train-only"),
    Treebank("UD_Spanish-AnCora", "es", "Indo-European (Romance)", "Latin", "unavailable"),
    Treebank("UD_Arabic-PADT", "ar", "Afro-Asiatic (Semitic)", "Arabic", "unavailable"),
    Treebank("UD_Hindi-HDTB", "hi", "Indo-European (Indo-Aryan)", "Devanagari", "unavailable"),
)

_LICENSE_LINE = re.compile(r"^\W*licen[cs]e\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_SPLIT = re.compile(r"-ud-(train|dev|test)(?:-[a-z])?\.conllu$")


def git(git_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)


def licence(git_dir: Path) -> str:
    """The `License:` line of the treebank's README (the UD metadata block), else `see LICENSE.txt`."""
    names = git(git_dir, "ls-tree", "--name-only", "HEAD").stdout.decode().split()
    for name in names:
        if name.lower().startswith("readme"):
            readme = git(git_dir, "show", f"HEAD:{name}").stdout.decode("utf-8", "replace")
            found = _LICENSE_LINE.search(readme)
            if found:
                return found[1]
    return "see LICENSE.txt"


def counts(text: str) -> tuple[int, int]:
    """(sentences, `# newdoc` documents) of a CoNLL-U text."""
    lines = text.split("\n")
    sentences = sum(1 for line in lines if line.startswith("# text =") or line.startswith("# text="))
    return sentences, sum(1 for line in lines if line.startswith("# newdoc"))


def extract(treebank: Treebank, mirrors: Path, out: Path) -> dict:
    """Write the treebank's conllu files to OUT/<name>/; the manifest row's facts."""
    git_dir = mirrors / f"UniversalDependencies+{treebank.name}" / "repo"
    repository = f"github.com/UniversalDependencies/{treebank.name}"
    row = {"treebank": treebank, "repository": repository, "commit": "", "licence": "", "files": {}}
    if not git_dir.is_dir():
        row["note"] = f"no mirror at {git_dir}"
        return row
    row["commit"] = git(git_dir, "rev-parse", "HEAD").stdout.decode().strip()
    row["licence"] = licence(git_dir)
    names = git(git_dir, "ls-tree", "--name-only", "HEAD").stdout.decode().split()
    for name in sorted(names):
        split = _SPLIT.search(name)
        if not split:
            continue
        shown = git(git_dir, "show", f"HEAD:{name}")
        if shown.returncode != 0:
            row["files"].setdefault(split[1], []).append((name, None))
            continue
        target = out / treebank.name / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.read_bytes() != shown.stdout:  # leave a file being read alone
            target.write_bytes(shown.stdout)
        row["files"].setdefault(split[1], []).append((name, counts(shown.stdout.decode("utf-8"))))
    return row


def cell(files: list | None) -> str:
    if not files:
        return "none upstream"
    parts = []
    for name, facts in files:
        if facts is None:
            parts.append(f"{name}: absent from snapshot")
        else:
            sentences, docs = facts
            parts.append(f"{sentences:,} sent / {docs:,} docs" if docs else f"{sentences:,} sent / no newdoc")
    return "; ".join(parts)


def manifest(rows: list[dict], out: Path) -> str:
    lines = [
        "# UD treebanks for the multilingual benchmark (manifest; no data here)",
        "",
        "Written by `python training/ud_languages.py OUT` from bare mirrors of the upstream repositories.",
        f"The CoNLL-U files live outside the repository (here: `{out}/<treebank>/`), unchanged from the",
        "commit given; they are never copied into the repository. Train on train, choose on dev, report on",
        "test (../shared/data/README.md). `absent from snapshot`: the upstream file exists but the mirror",
        "did not hold it (files of about 4 MB and more), so it was not extracted. `no newdoc`: the benchmark",
        "reader groups such a file into documents of 10 consecutive sentences.",
        "",
        "| lang | treebank | role | family | script | licence | commit | train | dev | test |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        tb = row["treebank"]
        commit = row["commit"][:12] or row.get("note", "")
        link = f"[{tb.name}](https://{row['repository']})"
        splits = " | ".join(cell(row["files"].get(split)) for split in SPLITS)
        lines.append(
            f"| {tb.code} | {link} | {tb.role} | {tb.family} | {tb.script} | {row['licence']} | {commit} "
            f"| {splits} |"
        )
    lines += ["", "Full commits:", ""]
    lines += [f"- {row['treebank'].name}: `{row['commit']}`" for row in rows if row["commit"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the conllu files (outside the repository)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if DEFAULT_MANIFEST.parents[3] in out.parents or out == DEFAULT_MANIFEST.parents[3]:
        parser.error("OUT must be outside the repository: UD files are never copied into it")
    rows = [extract(treebank, args.mirrors, out) for treebank in TREEBANKS]
    args.manifest.parent.mkdir(parents=True, exist_ok=True)
    args.manifest.write_text(manifest(rows, out), encoding="utf-8")
    for row in rows:
        got = sum(facts is not None for files in row["files"].values() for _, facts in files)
        print(f"{row['treebank'].name}: {got} file(s) extracted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
