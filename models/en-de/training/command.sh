#!/usr/bin/env bash
# de-base-v6: the continuation of de-base-v5 on a machine that had lost v5's run directory.
# A warm start (train --init-from) from the shipped base of v5 (the mean of its checkpoints at
# steps 4,500-5,250, models/en-de/base-checkpoint at commit eff28d5; its weights' sha256 is in
# run.json), a new optimiser state, and a learning rate that warms up over 150 steps to v5's
# rate at step 5,250 (1e-3 x sqrt(1000 / 5250) = 4.4e-4) and then falls linearly to 0 at step
# 1,200: the budget of one session on 2 cores, spent so that the run ends annealed. Extra
# arguments are appended (--resume continues it). Paths default to the development machine's
# cache; override CORPUS, START and RUN.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
CACHE=${HEADWISE_CACHE:-$HOME/.cache/headwise}
CORPUS=${CORPUS:-$CACHE/corpus/de}
START=${START:-$CACHE/start/de-base-v5-avg}   # a copy of base-checkpoint at eff28d5
RUN=${RUN:-$CACHE/runs/de-base-v6}
exec /usr/bin/python3 trainer/headwise-train train --data "$CORPUS" --vocab "$START" --out "$RUN" \
  --init-from "$START" --dropout 0.1 --max-tokens 4096 --update-freq 1 --lr 4.4e-4 \
  --warmup 150 --lr-schedule linear --decay-steps 1200 --min-lr 0 --steps 1200 \
  --eval-every 200 --dev-bleu-sentences 800 --patience 3 --min-delta 0.2 --keep 8 \
  --checkpoint-every 100 --threads 2 --precision bf16 --seed 6 --log-every 50 "$@"
