#!/usr/bin/env bash
# de-base-v7: the convergence test of de-base-v6 (models/en-de/training/README.md, "Continuing").
# The same recipe as v6 (models/en-de/training/command.sh) with only the start point and the seed
# changed: a warm start (train --init-from) from v6's shipped base (the mean of its checkpoints at
# steps 900-1,200, models/en-de/base-checkpoint at commit 9ab6dfb, file sha256 8882f491...;
# run.json records the sha256 of its weights, afbd7f35...), a new optimiser state, a learning rate that warms up over 150 steps to
# 4.4e-4 and falls linearly to 0 at step 1,200. Its history begins with the start point's dev
# record at step 0. If the best dev BLEU stays under that record + 0.2, v6 is where this recipe
# converges; otherwise v7's average replaces it. Extra arguments are appended (--resume continues
# it). Paths default to the development machine's cache; override CORPUS, START and RUN.
# As run: stopped after the checkpoint of step 500 and continued with `--resume --patience 0`
# (train.log, 12:32): with the start point's record in the history, --patience 3 would have
# ended the run at step 600, inside the dip that a warm restart's first steps make and before
# the learning rate had decayed (v6, started before step-0 records existed, never met this).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
CACHE=${HEADWISE_CACHE:-$HOME/.cache/headwise}
CORPUS=${CORPUS:-$CACHE/corpus/de}
START=${START:-$CACHE/start/de-base-v6-avg}   # a copy of base-checkpoint at 9ab6dfb
RUN=${RUN:-$CACHE/runs/de-base-v7}
exec /usr/bin/python3 trainer/headwise-train train --data "$CORPUS" --vocab "$START" --out "$RUN" \
  --init-from "$START" --dropout 0.1 --max-tokens 4096 --update-freq 1 --lr 4.4e-4 \
  --warmup 150 --lr-schedule linear --decay-steps 1200 --min-lr 0 --steps 1200 \
  --eval-every 200 --dev-bleu-sentences 800 --patience 3 --min-delta 0.2 --keep 8 \
  --checkpoint-every 100 --threads 2 --precision bf16 --seed 7 --log-every 50 "$@"
