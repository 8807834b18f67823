#!/bin/bash
# A frozen probe on multilingual-e5-small (layers 4,5,6; clean text only, no line features), trained on
# the UD train files the snapshot holds (tr IMST, el GDT, mr UFAL, fr Sequoia, it ParTUT, hu Szeged,
# vi VTB: 11,792 sentences, all spaced scripts; no other language's train file could be read), written
# OUTSIDE the repository and never shipped. Scored on the dev files only, through the benchmark harness:
# SEGMENTER_MODELS points at a folder whose multilingual-e5-small/accurate is the probe, so that
# `attention@multilingual-e5-small` (strategy probe) reads it. Run run.sh first (derived ja files).
set -e
cd "$(dirname "$0")/../../.."
HERE=benchmarks/results/multilingual-baselines-2026-12-08
UD=${UD:-/work/ud-multi}
PROBE=$UD/probe-e5
if [ ! -f $PROBE/probe.npz ]; then
  TRAIN=""
  for f in UD_Turkish-IMST/tr_imst UD_Greek-GDT/el_gdt UD_Marathi-UFAL/mr_ufal UD_French-Sequoia/fr_sequoia \
      UD_Italian-ParTUT/it_partut UD_Hungarian-Szeged/hu_szeged UD_Vietnamese-VTB/vi_vtb; do
    TRAIN="$TRAIN --data conllu:$UD/$f-ud-train.conllu"
  done
  .venv/bin/segmenter train probe --model multilingual-e5-small --layers 4,5,6 --conditions clean \
    --no-line-breaks --no-progress --out $PROBE $TRAIN
fi
mkdir -p $UD/models/multilingual-e5-small
ln -sfn $PROBE $UD/models/multilingual-e5-small/accurate
MAIN="UD_German-GSD/de_gsd UD_French-GSD/fr_gsd UD_Spanish-GSD/es_gsd UD_Portuguese-Bosque/pt_bosque
  UD_Italian-ISDT/it_isdt UD_Russian-GSD/ru_gsd UD_Polish-PDB/pl_pdb UD_Greek-GDT/el_gdt
  UD_Persian-Seraji/fa_seraji UD_Finnish-TDT/fi_tdt UD_Turkish-IMST/tr_imst UD_Hebrew-HTB/he_htb
  UD_Korean-GSD/ko_gsd UD_Chinese-GSD/zh_gsd UD_Japanese-GSD/ja_gsd UD_Marathi-UFAL/mr_ufal"
DATASETS=""
for tb in $MAIN; do DATASETS="$DATASETS --dataset conllu:$UD/$tb-ud-dev.conllu"; done
DATASETS="$DATASETS --dataset conllu:$UD/derived/ja_gsd-ud-dev.nodoc.conllu"
SEGMENTER_MODELS=$UD/models .venv/bin/segmenter bench $DATASETS --system attention@multilingual-e5-small \
  --condition clean --threads 1 --no-progress --out $HERE/probe-dev
