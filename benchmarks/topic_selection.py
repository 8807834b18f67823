"""Choose the topic method on Choi (2000) subsets 3-5 and 6-8, by the rule written beforehand.

    python -m segmenter.bench.topic_selection --data ../shared/data --out benchmarks/results/topics-selection

The rule (`benchmarks/results/topics-selection/rule.md`): three kinds of sentence vectors times two
partitions, scored by Pk with the true number of sections; then the default penalty (or cutoff) of the
winner without it. Writes selection.json and selection.md. Only the choice subsets are read.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np
import torch
from tqdm import tqdm

from segmenter.bench.topic_data import data_dir, read_choi
from segmenter.bench.topic_metrics import scores
from segmenter.topics.partition import depth_boundaries, optimal_partition

CHOICE_SUBSETS = ("3-5", "6-8")
PENALTIES = (0.5, 1, 1.5, 2, 3, 4, 6, 8, 12)
CUTOFFS = (-0.5, 0, 0.25, 0.5, 0.75, 1, 1.5)
TIE = 0.002


def pooled_block(encoder, sentences: list[str], layer: int, heads: bool, batch_size: int = 32) -> np.ndarray:
    """(S, D) unit means over each sentence's tokens of block `layer`'s per-head context vectors
    (`heads`) or outputs."""
    out = []
    tokenizer = encoder.tokenizer
    for first in range(0, len(sentences), batch_size):
        batch = tokenizer(
            sentences[first : first + batch_size], truncation=True, max_length=256, padding=True,
            return_tensors="np",
        )  # fmt: skip
        capture = encoder.forward(
            batch["input_ids"], batch["attention_mask"], layers=(layer,), contexts=heads, hidden=not heads
        )
        values = capture.contexts[0] if heads else capture.hidden[0]  # (B, T, H, d) or (B, T, D)
        values = values.reshape(values.shape[0], values.shape[1], -1)  # (B, T, D)
        mask = batch["attention_mask"][..., None].astype(np.float32)  # (B, T, 1)
        mean = (values * mask).sum(1) / mask.sum(1)  # (B, D)
        out.append(mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12))
    return np.concatenate(out)


def vector_sources():
    """name -> function(sentences) -> (S, D) unit vectors."""
    from segmenter.api import Segmenter
    from segmenter.encoder.torch.encoder import Encoder
    from segmenter.topics.sentence_vectors import SentenceVectors

    mean = SentenceVectors()
    heads = Encoder(max_layer=4)
    tuned = Segmenter().encoder
    return {
        "mean": mean,
        "heads-4": lambda s: pooled_block(heads, s, 4, heads=True),
        "tuned-3": lambda s: pooled_block(tuned, s, tuned.loaded_layers, heads=False),
    }


def partition(kind: str, vectors: np.ndarray, n_sections: int | None, knob: float | None) -> list[int]:
    if kind == "dp":
        return optimal_partition(vectors, n_sections=n_sections, penalty=1.0 if knob is None else knob)
    return depth_boundaries(vectors, n_sections=n_sections, cutoff=0.5 if knob is None else knob)


def mean_scores(docs_vectors, kind: str, known: bool, knob: float | None) -> dict[str, tuple[float, float]]:
    """subset -> (mean Pk, mean WindowDiff) over its documents."""
    result = {}
    for subset, pairs in docs_vectors.items():
        pks, wds = [], []
        for doc, vectors in pairs:
            n_sections = len(doc.starts) + 1 if known else None
            pk, wd = scores(doc.starts, partition(kind, vectors, n_sections, knob), len(doc.sentences))
            pks.append(pk)
            wds.append(wd)
        result[subset] = (float(np.mean(pks)), float(np.mean(wds)))
    return result


def average(by_subset: dict[str, tuple[float, float]]) -> tuple[float, float]:
    return tuple(float(np.mean([v[i] for v in by_subset.values()])) for i in (0, 1))


def _row(result: dict, names: tuple) -> str:
    """A markdown row: `names`, then Pk / WindowDiff per choice subset and their mean."""
    cells = [*map(str, names)]
    cells += [f"{result['by_subset'][s][0]:.3f} / {result['by_subset'][s][1]:.3f}" for s in CHOICE_SUBSETS]
    cells.append(f"{result['mean'][0]:.3f} / {result['mean'][1]:.3f}")
    return "| " + " | ".join(cells) + " |"


@click.command()
@click.option("--data", default=None, help="gold data folder [default: $SEGMENTER_DATA or ../shared/data]")
@click.option("--out", type=click.Path(file_okay=False), required=True)
def main(data, out) -> None:
    torch.manual_seed(0)
    root = data_dir(data)
    docs = {subset: read_choi(subset, root) for subset in CHOICE_SUBSETS}
    rows, auto_rows = [], []
    for name, embed in vector_sources().items():
        docs_vectors = {
            subset: [(doc, embed(list(doc.sentences))) for doc in tqdm(items, desc=f"{name} {subset}")]
            for subset, items in docs.items()
        }
        for kind, knobs in (("dp", PENALTIES), ("depth", CUTOFFS)):
            known = mean_scores(docs_vectors, kind, True, None)
            rows.append({"vectors": name, "partition": kind, "by_subset": known, "mean": average(known)})
            for knob in knobs:
                auto = mean_scores(docs_vectors, kind, False, knob)
                auto_rows.append(
                    {
                        "vectors": name,
                        "partition": kind,
                        "knob": knob,
                        "by_subset": auto,
                        "mean": average(auto),
                    }
                )
    best_pk = min(r["mean"][0] for r in rows)
    tied = [r for r in rows if r["mean"][0] <= best_pk + TIE]
    winner = min(tied, key=lambda r: (r["mean"][1], r["vectors"] != "mean", r["partition"] != "dp"))
    candidates = [
        r for r in auto_rows if (r["vectors"], r["partition"]) == (winner["vectors"], winner["partition"])
    ]
    best_auto = min(r["mean"][0] for r in candidates)
    tied_auto = [r for r in candidates if r["mean"][0] <= best_auto + TIE]
    tied_auto.sort(key=lambda r: r["mean"][1])
    chosen = tied_auto[0]
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    record = {"known_count": rows, "automatic": auto_rows, "winner": winner, "default_knob": chosen}
    (folder / "selection.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    lines = [
        "# Topic method selection on Choi 3-5 and 6-8 (rule: rule.md)",
        "",
        "Command: `python -m segmenter.bench.topic_selection --data ../shared/data --out "
        "benchmarks/results/topics-selection`",
        "",
        "## True number of sections given (Pk / WindowDiff, mean over documents)",
        "",
        "| vectors | partition | 3-5 | 6-8 | mean |",
        "|---|---|---|---|---|",
    ]
    lines += [_row(r, (r["vectors"], r["partition"])) for r in rows]
    lines += [
        "",
        f"Winner: **{winner['vectors']} + {winner['partition']}**.",
        "",
        "## Number of sections not given (penalty for dp, cutoff for depth)",
        "",
        "| vectors | partition | knob | 3-5 | 6-8 | mean |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_row(r, (r["vectors"], r["partition"], r["knob"])) for r in auto_rows]
    lines += ["", f"Default for the winner: knob **{chosen['knob']}**.", ""]
    (folder / "selection.md").write_text("\n".join(lines), encoding="utf-8")
    click.echo("\n".join(lines))


if __name__ == "__main__":
    main()
