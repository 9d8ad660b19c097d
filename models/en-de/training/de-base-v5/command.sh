#!/usr/bin/env bash
# The training run de-base-v5 (see ../README.md), from step 0. Extra arguments are appended,
# e.g. --resume to continue from the newest checkpoint. Paths default to the development
# machine's cache; override CORPUS, VOCAB and RUN.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
CACHE=${HEADWISE_CACHE:-$HOME/.cache/headwise}
CORPUS=${CORPUS:-$CACHE/corpus/de}
VOCAB=${VOCAB:-$CACHE/vocab/de-8k}
RUN=${RUN:-$CACHE/runs/de-base-v5}
exec /usr/bin/python3 trainer/headwise-train train --data "$CORPUS" --vocab "$VOCAB" --out "$RUN" \
  --d-model 256 --encoder-layers 6 --decoder-layers 3 --heads 8 --ffn 1024 --activation swish \
  --dropout 0.1 --max-tokens 4096 --update-freq 1 --lr 1e-3 --warmup 1000 \
  --lr-schedule inverse-sqrt --steps 40000 --eval-every 1000 --dev-bleu-sentences 800 \
  --patience 5 --min-delta 0.2 --keep 8 --threads 1 --precision bf16 --seed 1 --log-every 50 "$@"
