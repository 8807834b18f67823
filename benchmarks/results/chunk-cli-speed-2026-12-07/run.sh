#!/bin/bash
# `segmenter chunk` against `segmenter segment` on the same 1 MB file (default threads, run alone), and
# chunk's peak memory on 1 MB and 4 MB (flat memory: the same peak). The text: the topic corpus's dev
# documents joined by blank lines, repeated to the size. Output: results.txt beside this script.
set -e
cd "$(dirname "$0")/../../.."
work="${TMPDIR:-/tmp}/chunk-speed"
mkdir -p "$work"
.venv/bin/python - "$work" <<'PY'
import json, sys
texts = [json.loads(line)["text"] for line in open("benchmarks/data/topics/dev.jsonl", encoding="utf-8")]
base = "\n\n".join(texts)
for mb in (1, 4):
    n = mb * 1_000_000
    with open(f"{sys.argv[1]}/text-{mb}mb.txt", "w", encoding="utf-8") as f:
        f.write((base * (n // len(base) + 1))[:n])
PY
for cmd in "segment" "chunk" "chunk --no-topics"; do
  /usr/bin/time -f "$cmd, 1 MB: %e s, max RSS %M KB" .venv/bin/segmenter $cmd "$work/text-1mb.txt" --no-progress -o "$work/out.txt" 2>&1 | tail -1
done
for cmd in "segment" "chunk" "chunk --no-topics"; do
  /usr/bin/time -f "$cmd, 4 MB: %e s, max RSS %M KB" .venv/bin/segmenter $cmd "$work/text-4mb.txt" --no-progress -o "$work/out.txt" 2>&1 | tail -1
done
