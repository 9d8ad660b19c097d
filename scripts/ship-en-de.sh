#!/usr/bin/env bash
# Turns a finished en-de base training run into the repository's shipped models (issue 12,
# "The shipped models"): the averaged base checkpoint, its test scores (greedy and beam 4, per
# length bucket), one L0 pruning run with the shipped recipe, the head analyses, and the int8
# .hwm files that scripts/demo.sh checks. Every stage writes into WORK first and is resumable
# (the trainer's commands resume and refuse to overwrite); `install` alone touches models/.
#
#   scripts/ship-en-de.sh                      # all stages, in order
#   scripts/ship-en-de.sh eval prune           # only these stages
#
# Stages: base (export the mean of the newest AVG checkpoints as F16, dev curve PNG), eval (test
# split, greedy and beam 4), prune (L0 gates on all three attention types, LAMBDA, PRUNE_STEPS;
# gated F16 checkpoint and its test scores), analyze (head analysis of both on ANALYZE_SENTENCES
# dev sentences), shortlist (the vocabulary shortlist of the training split, `headwise-train
# shortlist` with its defaults, and what it costs on the test split, greedy and beam 4, on and off:
# bench/shortlist.py into eval/shortlist-*.json), install (copy the checkpoints, and with
# SHORTLIST=1 shortlist.tsv, into models/en-de; convert both .hwm with int8 weights and that
# shortlist), demo, card (the demo sentences through the runtime, then the model card's
# generated tables: `headwise-train model-card`).
# Environment (defaults below): RUN, CORPUS, VOCAB, WORK, THREADS, DEVICE, AVG, LAMBDA,
# PRIOR and OFFSET (a run warm-started with `train --init-from`: the history.json of the run it
# continues and the step at which it began, for the dev curve),
# PRUNE_STEPS, PRUNE_ARGS (more `prune` options), PRUNED (a point of the pruning study,
# `headwise-train sweep pick ship --field name` under its ROOT: the prune stage then ships that
# point's gated export and scores it with its run's record instead of pruning again; the point
# must have been pruned from WORK/base-checkpoint), PRUNE_EVAL_VARIANTS (default full,gated),
# PRUNE_EVAL_BEAM4_BASELINE (0: beam 4 scores only the pruned variants; the base's beam-4 score
# is the eval stage's), ANALYZE_SENTENCES, EVAL_LIMIT (first N test
# sentences only, for a dry run; 0 = all), MODELS (default models/en-de), SHORTLIST (1, the
# default: the .hwm files carry the shortlist, 0.10-0.11 BLEU at beam 4 for 1.05-1.32x at batch
# 1, bench/results/2026-12-08-shortlist-per-line-x86-avx512vnni.md; 0: they carry none, the
# shortlist stage does nothing and install removes eval/shortlist-*.json and shortlist.tsv, so
# that the card does not describe one).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CACHE=${HEADWISE_CACHE:-$HOME/.cache/headwise}
RUN=${RUN:-$CACHE/runs/de-base-v5}
CORPUS=${CORPUS:-$CACHE/corpus/de}
VOCAB=${VOCAB:-$CACHE/vocab/de-8k}
WORK=${WORK:-$CACHE/ship/de}
THREADS=${THREADS:-1}
DEVICE=${DEVICE:-cpu}
AVG=${AVG:-5}
LAMBDA=${LAMBDA:-0.015}
PRUNE_STEPS=${PRUNE_STEPS:-2000}
ANALYZE_SENTENCES=${ANALYZE_SENTENCES:-500}
EVAL_LIMIT=${EVAL_LIMIT:-0}
PRUNE_ARGS=${PRUNE_ARGS:-}
PRUNE_EVAL_VARIANTS=${PRUNE_EVAL_VARIANTS:-full,gated}
PRUNE_EVAL_BEAM4_BASELINE=${PRUNE_EVAL_BEAM4_BASELINE:-1}
MODELS=${MODELS:-models/en-de}
PRIOR=${PRIOR:-}
PRUNED=${PRUNED:-}
OFFSET=${OFFSET:-0}
SHORTLIST=${SHORTLIST:-1}

train() { /usr/bin/python3 trainer/headwise-train "$@"; }
say() { echo "ship-en-de: $*"; }

stage_base() {
  [[ -d "$RUN" ]] || { echo "ship-en-de: no run directory $RUN (set RUN)" >&2; exit 1; }
  mkdir -p "$WORK" "$MODELS/training"
  if [[ ! -f "$WORK/base-checkpoint/model.safetensors" ]]; then
    train export --run "$RUN" --average "$AVG" --out "$WORK/base-checkpoint" --dtype f16 \
      --record "$WORK/export.json"
  fi
  cp "$WORK/export.json" "$MODELS/training/export.json"
  local prior=()
  [[ -n "$PRIOR" ]] && prior=(--prior "$PRIOR" --offset "$OFFSET")
  train plot-run --run "$RUN" --out "$MODELS/training/dev-curve.png" "${prior[@]}" \
    --title "en-de base ($(basename "$RUN"))"
  cp "$RUN/history.json" "$RUN/run.json" "$MODELS/training/"
  cp "$RUN/train.log" "$MODELS/training/train.log"
}

stage_eval() {
  mkdir -p "$MODELS/eval"
  for beam in 1 4; do
    local name=greedy; [[ $beam == 4 ]] && name=beam4
    train evaluate --model "$WORK/base-checkpoint" --data "$CORPUS" --split test --beam "$beam" \
      --threads "$THREADS" --limit "$EVAL_LIMIT" --json "$MODELS/eval/new-base-test-$name.json"
  done
}

stage_prune() {
  local prune_run="$WORK/prune"
  if [[ -n "$PRUNED" ]]; then
    [[ -f "$PRUNED/export/model.safetensors" && -f "$PRUNED/run/run.json" ]] || {
      echo "ship-en-de: PRUNED=$PRUNED is not a finished pruning-study point (export/ and run/run.json)" >&2
      exit 1
    }
    # The point must start from the base this stage scores it against.
    local start
    start=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prune_args"]["start"])' \
      "$PRUNED/run/run.json")
    if ! cmp -s "$start/model.safetensors" "$WORK/base-checkpoint/model.safetensors"; then
      echo "ship-en-de: $PRUNED was pruned from $start, not from $WORK/base-checkpoint" >&2
      exit 1
    fi
    if [[ ! -f "$WORK/checkpoint/model.safetensors" ]]; then
      rm -rf "$WORK/checkpoint" && cp -r "$PRUNED/export" "$WORK/checkpoint"
    fi
    prune_run="$PRUNED/run"
  elif [[ ! -f "$WORK/checkpoint/model.safetensors" ]]; then
    local resume=()
    [[ -d "$WORK/prune" ]] && resume=(--resume)
    train prune --from "$WORK/base-checkpoint" --data "$CORPUS" --vocab "$VOCAB" \
      --out "$WORK/prune" "${resume[@]}" --lambda "$LAMBDA" --types enc,dec,cross \
      --steps "$PRUNE_STEPS" --threads "$THREADS" --device "$DEVICE" $PRUNE_ARGS \
      --export "$WORK/checkpoint" --export-dtype f16
  fi
  for beam in 1 4; do
    local name=pruning-eval.json; [[ $beam == 4 ]] && name=pruning-eval-beam4.json
    local baseline=(--baseline "$WORK/base-checkpoint")
    [[ $beam == 4 && $PRUNE_EVAL_BEAM4_BASELINE == 0 ]] && baseline=()
    train prune-eval --model "$WORK/checkpoint" "${baseline[@]}" \
      --pruning-run "$prune_run" --data "$CORPUS" --vocab "$VOCAB" --split test \
      --beam "$beam" --threads "$THREADS" --limit "$EVAL_LIMIT" --variants "$PRUNE_EVAL_VARIANTS" \
      --json "$MODELS/$name"
  done
}

stage_analyze() {
  for m in base pruned; do
    local ckpt="$WORK/base-checkpoint"; [[ $m == pruned ]] && ckpt="$WORK/checkpoint"
    train analyze --model "$ckpt" --data "$CORPUS" --split dev --sentences "$ANALYZE_SENTENCES" \
      --threads "$THREADS" --out "$MODELS/analysis/$m" --overwrite
    cp "$MODELS/analysis/$m/analysis.json" "$ckpt/analysis.json"
  done
}

# The shipped checkpoint directory of each .hwm file.
hwm_source() { [[ $1 == base.hwm ]] && echo base-checkpoint || echo checkpoint; }

# Both checkpoints of WORK, or a clear error.
need_checkpoints() {
  for d in base-checkpoint checkpoint; do
    [[ -f "$WORK/$d/model.safetensors" ]] || { echo "ship-en-de: $WORK/$d is missing (run the earlier stages)" >&2; exit 1; }
  done
}

stage_shortlist() {
  if [[ $SHORTLIST == 0 ]]; then say "SHORTLIST=0: no shortlist"; return; fi
  need_checkpoints
  mkdir -p "$MODELS/eval"
  if [[ ! -f "$WORK/shortlist.tsv" ]]; then
    train shortlist --data "$CORPUS" --vocab "$WORK/base-checkpoint" --out "$WORK/shortlist.tsv" \
      --report-split dev --json "$MODELS/eval/shortlist-build.json"
  fi
  cmake --preset default >/dev/null
  cmake --build --preset default --target headwise-convert headwise_python -- -j"$(nproc)"
  for hwm in base.hwm model.hwm; do
    /usr/bin/python3 bench/shortlist.py "$WORK/$(hwm_source "$hwm")" --shortlist "$WORK/shortlist.tsv" \
      --convert build/default/converter/headwise-convert --translate build/default \
      --data "$CORPUS" --split test --limit "$EVAL_LIMIT" --speed-lines 0 --formats int8 \
      --beams 1,4 --threads "$THREADS" --out "$WORK/shortlist-check" \
      --json "$MODELS/eval/shortlist-$hwm.json"
  done
}

stage_install() {
  need_checkpoints
  for d in base-checkpoint checkpoint; do
    rm -rf "${MODELS:?}/$d" && cp -r "$WORK/$d" "$MODELS/$d"
  done
  # The shortlist goes into the model folder beside the checkpoints, so that scripts/demo.sh
  # reproduces model.hwm byte for byte from what the repository holds.
  local shortlist=()
  if [[ $SHORTLIST == 0 ]]; then
    rm -f "$MODELS"/eval/shortlist-*.json "$MODELS/shortlist.tsv"
  else
    [[ -f "$WORK/shortlist.tsv" ]] || { echo "ship-en-de: $WORK/shortlist.tsv is missing (run the shortlist stage, or set SHORTLIST=0)" >&2; exit 1; }
    cp "$WORK/shortlist.tsv" "$MODELS/shortlist.tsv"
    shortlist=(--shortlist "$MODELS/shortlist.tsv")
  fi
  cmake --preset default >/dev/null
  cmake --build --preset default --target headwise-convert -- -j"$(nproc)"
  local convert=build/default/converter/headwise-convert
  for hwm in model.hwm base.hwm; do
    "$convert" "$MODELS/$(hwm_source "$hwm")" -o "$MODELS/$hwm" --weights int8 --force "${shortlist[@]}"
  done
  ls -l "$MODELS"/*.hwm
}

stage_demo() { bash scripts/demo.sh; }

# The four UI strings of issue 12 and two sentences.
DEMO_SENTENCES=(
  "Open the file." "Unable to connect to the server." "Do you want to save the changes?"
  "Save changes before closing?"
  "The package could not be installed because a dependency is missing."
  "If you do not know what to answer, keep the default setting."
)

stage_card() {
  cmake --build --preset default --target headwise_python -- -j"$(nproc)"
  local args=()
  for s in "${DEMO_SENTENCES[@]}"; do args+=(--sentence "$s"); done
  train model-card --models "$MODELS" --demo model.hwm base.hwm "${args[@]}"
}

stages=("$@")
((${#stages[@]})) || stages=(base eval prune analyze shortlist install demo card)
for s in "${stages[@]}"; do
  case "$s" in
    base | eval | prune | analyze | shortlist | install | demo | card) say "stage $s"; "stage_$s" ;;
    *) echo "ship-en-de: unknown stage '$s' (base eval prune analyze shortlist install demo card)" >&2; exit 2 ;;
  esac
done
