#!/bin/bash
# Multilingual baselines (2026-12-08): rule-based splitters and the two unsupervised attention strategies
# on multilingual-e5-small, clean condition, UD dev and test files of 16 languages (no probe exists for
# this backbone). Data: `python training/ud_languages.py $UD` (benchmarks/data/ud_multilingual/MANIFEST.md
# gives repositories, commits, licences); the files stay outside the repository. No --limit-docs: every
# file is read whole. Speeds in results.md are not comparable (shared machine); only P/R/F1 are reported.
# Derived inputs (in $UD/derived, not in the repository):
#   ja *.nodoc: Japanese GSD puts `# newdoc` before every sentence (shuffled sentences), so each document
#     is one sentence with no gold boundary; with the markers dropped the reader groups 10 sentences.
#   ar *.merged: Arabic PUD repeats `# newdoc id = X` before every sentence of document X; the reader
#     starts a document at every marker, so consecutive repeats are dropped (397 documents, as Hindi PUD).
set -e
cd "$(dirname "$0")/../../.."
HERE=benchmarks/results/multilingual-baselines-2026-12-08
UD=${UD:-/work/ud-multi}
mkdir -p $UD/derived
for split in dev test; do
  grep -v '^# newdoc' $UD/UD_Japanese-GSD/ja_gsd-ud-$split.conllu > $UD/derived/ja_gsd-ud-$split.nodoc.conllu
done
awk '/^# newdoc/ { if ($0 == prev) next; prev = $0 } 1' $UD/UD_Arabic-PUD/ar_pud-ud-test.conllu \
  > $UD/derived/ar_pud-ud-test.merged.conllu
MAIN="UD_German-GSD/de_gsd UD_French-GSD/fr_gsd UD_Spanish-GSD/es_gsd UD_Portuguese-Bosque/pt_bosque
  UD_Italian-ISDT/it_isdt UD_Russian-GSD/ru_gsd UD_Polish-PDB/pl_pdb UD_Greek-GDT/el_gdt
  UD_Persian-Seraji/fa_seraji UD_Finnish-TDT/fi_tdt UD_Turkish-IMST/tr_imst UD_Hebrew-HTB/he_htb
  UD_Korean-GSD/ko_gsd UD_Chinese-GSD/zh_gsd UD_Japanese-GSD/ja_gsd UD_Marathi-UFAL/mr_ufal"
SYSTEMS="--system pysbd --system spacy-sentencizer --system punkt
  --system attention@multilingual-e5-small:sep-attention --system attention@multilingual-e5-small:similarity"
for split in dev test; do
  DATASETS=""
  for tb in $MAIN; do DATASETS="$DATASETS --dataset conllu:$UD/$tb-ud-$split.conllu"; done
  DATASETS="$DATASETS --dataset conllu:$UD/derived/ja_gsd-ud-$split.nodoc.conllu"
  if [ $split = test ]; then
    DATASETS="$DATASETS --dataset conllu:$UD/derived/ar_pud-ud-test.merged.conllu"
    DATASETS="$DATASETS --dataset conllu:$UD/UD_Hindi-PUD/hi_pud-ud-test.conllu"
  fi
  .venv/bin/segmenter bench $DATASETS $SYSTEMS --condition clean --threads 1 --no-progress --out $HERE/$split
done
