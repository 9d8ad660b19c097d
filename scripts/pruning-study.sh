#!/usr/bin/env bash
# The pruning study of issue 13 (docs/pruning-results.md): every point is one `headwise-train
# sweep` command that skips what is done and resumes what was interrupted, so this script can
# be rerun at any time and continues where it stopped.
#
#   GPU, in one go:      DEVICE=cuda scripts/pruning-study.sh
#   CPU, in background:  nohup nice -n 10 scripts/pruning-study.sh > study.log 2>&1 &
#
# Inputs (environment, defaults below): START = the converged base (a ckpt-*.pt / best.pt of the
# base run; its step count sets the from-scratch control's budget), BASE_CKPT = the same model
# exported (`headwise-train export`), with BASE_CKPT/analysis.json from `headwise-train
# analyze` (relevance, confidence, sinks); BASE_RUN = the base training run (its run.json
# settings train the from-scratch control). Phase 2 needs the headline lambdas, read off the
# phase-1 report: HEADLINE_ENC (the encoder-only point with <= 10 encoder heads closest to its
# control) and HEADLINE_ALL (the all-types point near a quarter of the heads).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=/root/.cache/headwise
ROOT=${ROOT:-$CACHE/sweep/de-v2}
DATA=${DATA:-$CACHE/corpus/de}
VOCAB=${VOCAB:-$CACHE/vocab/de-8k}
BASE_RUN=${BASE_RUN:-$CACHE/runs/de-base-v2}
START=${START:-$BASE_RUN/best.pt}
BASE_CKPT=${BASE_CKPT:-$CACHE/export/de-base-v2}
ANALYSIS=${ANALYSIS:-$BASE_CKPT/analysis.json}
DEVICE=${DEVICE:-cpu}
THREADS=${THREADS:-1}
ENC_LAMBDAS=${ENC_LAMBDAS:-0,0.002,0.005,0.01,0.02,0.04,0.08}
ALL_LAMBDAS=${ALL_LAMBDAS:-0,0.005,0.01,0.02,0.04,0.08}
HEADLINE_ENC=${HEADLINE_ENC:-}
HEADLINE_ALL=${HEADLINE_ALL:-}
OUT_DIR=${OUT_DIR:-models/en-de/sweep}
MD=${MD:-docs/pruning-results.md}

train() { /usr/bin/python3 trainer/headwise-train "$@"; }
common=(--root "$ROOT" --data "$DATA" --vocab "$VOCAB" --threads "$THREADS")

# Phase 1: the unpruned base, the L0 curves (seed 1) with their lambda-0 controls.
train sweep runs "${common[@]}" --lambdas "" --reference "base=$BASE_CKPT"
train sweep runs "${common[@]}" --from "$START" --device "$DEVICE" --settings enc \
  --lambdas "$ENC_LAMBDAS"
train sweep runs "${common[@]}" --from "$START" --device "$DEVICE" --settings all \
  --lambdas "$ALL_LAMBDAS"

# Rank pruning of the base without fine-tuning: AttnLRP, signed relevance, Michel, confidence,
# and 5 random orders.
train sweep rank "${common[@]}" --analysis "$ANALYSIS" --model "$BASE_CKPT"

# Phase 2: 3 seeds of the controls and of the two headline points, and the from-scratch
# control of the headline all-types layout at the updates of base + pruning.
if [[ -n "$HEADLINE_ENC" && -n "$HEADLINE_ALL" ]]; then
  train sweep runs "${common[@]}" --from "$START" --device "$DEVICE" --settings enc \
    --lambdas "0,$HEADLINE_ENC" --seeds 2,3
  train sweep runs "${common[@]}" --from "$START" --device "$DEVICE" --settings all \
    --lambdas "0,$HEADLINE_ALL" --seeds 2,3
  train sweep runs "${common[@]}" --from "$START" --device "$DEVICE" --lambdas "" \
    --scratch "scratch-all-$HEADLINE_ALL=@all-$HEADLINE_ALL" --base-run "$BASE_RUN" \
    --scratch-steps auto --steps "$(/usr/bin/python3 -c 'import shlex,sys
sys.path.insert(0, "trainer")
from headwise_trainer.sweep.cli import DEFAULT_PRUNE_ARGS as a
a = shlex.split(a); print(a[a.index("--steps") + 1])')"
else
  echo "pruning-study: phase 2 (seeds, from-scratch control) waits for HEADLINE_ENC and" \
       "HEADLINE_ALL (read them off $MD)"
fi

# The report: JSON + PNG + Markdown, from the records only.
train sweep report --root "$ROOT" --out-dir "$OUT_DIR" --md "$MD" --base-run "$BASE_RUN" \
  --analysis "$ANALYSIS"
