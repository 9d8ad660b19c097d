#!/usr/bin/env bash
# de-base-v8: de-base-v7's recipe again (models/en-de/training/de-base-v7/command.sh), run
# because v7's checkpoints were lost with its machine before its average was shipped. The same
# start (v6's shipped base, models/en-de/base-checkpoint at commit 9ab6dfb, weights sha256
# afbd7f35...), schedule and evaluation; seed 8 instead of 7, so that the two runs together also
# say how much a seed moves the result; --patience 0 from the start (v7 needed it after step
# 500: with the step-0 record in the history, --patience 3 ends a warm restart inside its first
# dip). If its average beats v6's on the test split it is shipped; v9 then starts from it.
# Extra arguments are appended (--resume continues it). Paths default to the development
# machine's cache; override CORPUS, START and RUN.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
CACHE=${HEADWISE_CACHE:-$HOME/.cache/headwise}
CORPUS=${CORPUS:-$CACHE/corpus/de}
START=${START:-$CACHE/start/de-base-v6-avg}   # a copy of base-checkpoint at 9ab6dfb
RUN=${RUN:-$CACHE/runs/de-base-v8}
exec /usr/bin/python3 trainer/headwise-train train --data "$CORPUS" --vocab "$START" --out "$RUN" \
  --init-from "$START" --dropout 0.1 --max-tokens 4096 --update-freq 1 --lr 4.4e-4 \
  --warmup 150 --lr-schedule linear --decay-steps 1200 --min-lr 0 --steps 1200 \
  --eval-every 200 --dev-bleu-sentences 800 --patience 0 --min-delta 0.2 --keep 8 \
  --checkpoint-every 100 --threads 2 --precision bf16 --seed 8 --log-every 50 "$@"
