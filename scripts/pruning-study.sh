#!/usr/bin/env bash
# The pruning study of issue 13 (docs/pruning-results.md) on the shipped en-de base: every part is
# `headwise-train sweep` commands that skip what is done and resume what was interrupted, so
# this script can be rerun at any time and continues where it stopped.
#
#   scripts/pruning-study.sh enc       # encoder-only L0 curve: lambda-0 control, then the lambdas
#   scripts/pruning-study.sh all       # all three attention types: control, then the lambdas
#   scripts/pruning-study.sh rank      # rank pruning of the base without fine-tuning
#   scripts/pruning-study.sh phase2    # seeds 2, 3 of the controls and headline points, and the
#                                      # from-scratch control (the headline lambdas come from
#                                      # `sweep pick enc|all` unless HEADLINE_ENC /
#                                      # HEADLINE_ALL are set)
#   scripts/pruning-study.sh settle    # issue 13 item 2: every L0 point of ROOT (the controls
#                                      # and seeds too) continued SETTLE_STEPS steps with the
#                                      # settle push, as points of SETTLE_ROOT, the rank records
#                                      # copied, and the from-scratch control (once phase 2 has
#                                      # finished it) continued by SETTLE_STEPS if its point kept
#                                      # its heads (the controls and headline points of
#                                      # every seed first); then ROOT=$SETTLE_ROOT ... report
#   scripts/pruning-study.sh report    # JSON + PNG + docs/pruning-results.md from the records
#   scripts/pruning-study.sh archive   # copy ROOT's result records to RECORDS (every stage also
#                                      # does it after each point; see "Records in git" below)
#   scripts/pruning-study.sh restore   # the reverse, for points ROOT lacks (every training
#                                      # stage does it first)
#
# On 2 cores run two parts at once, each on 1 thread (what the 2026-12-06 session did):
#   nohup nice -n 10 scripts/pruning-study.sh enc > enc.log 2>&1 &
#   nohup nice -n 10 scripts/pruning-study.sh all > all.log 2>&1 &
# then `rank` (about 40 greedy test-split scores) and `report`. On a GPU: DEVICE=cuda.
# Streams may overlap: a point one process trains or scores is locked (ROOT/.locks) and every
# other process skips it ("busy"), so a free core can take a later point of a running stream
# (for example `ENC_LAMBDAS=0.003 scripts/pruning-study.sh enc`) without the two colliding, and
# two `phase2` processes share its points (the 2026-12-06 session ran two).
#
# Records in git: ROOT (checkpoints, optimiser states) lives in a cache that a new machine does not
# have, so after every point the script copies the point's small result files (eval.json with the
# per-sentence BLEU statistics the bootstrap needs, and run/{run,history}.json, run/prune_log.jsonl)
# to RECORDS in the work tree. Commit them as they come: `ROOT=$RECORDS ... report` regenerates
# the report from them alone, and a study resumed on another machine skips nothing it has not
# got (the records say what finished; ROOT is where the next point resumes).
#
# Settings (environment): ROOT holds one directory per point (outside the work tree: optimiser
# states never go into git); START is the converged base the L0 points fine-tune (an exported
# checkpoint: models/en-de/base-checkpoint, the shipped base); STEPS fine-tuning steps per point
# (1,000 of 4,096-token batches, then SETTLE_STEPS 250 that settle the gates: about 70-90 minutes
# per point on one core of a 2-core machine),
# with the gate settings of `headwise-train sweep runs`' default --prune-args (log_alpha from 0,
# gate lr 0.01 constant, hard test-time rule, settle margin 1.0, sum penalty). The lambdas are in
# the order they run: the controls first, then points that spread the curve, then the rest (0.003:
# between enc-0.002's 17 and enc-0.005's 8 encoder heads, where the 10-heads claim is decided).
# de-v6 also ran all-0.0075, between all-0.005 and all-0.01 because its all-0.01 (40 of 96 heads)
# missed the 1-BLEU line of the shipping rule by 0.05; de-v7's all-0.01 is inside it (-0.89), so
# 0.0075 would keep more heads than a point already within the line and decides neither a claim
# nor the pick (ALL_LAMBDAS="... 0.0075" runs it). enc-0.05 runs last: enc-0.02 already keeps 3
# of 48 encoder heads (de-v7), so 0.05 lies below the "down to about 4" the curve needs, and 0.002-0.02 are its five lambdas.
set -euo pipefail
cd "$(dirname "$0")/.."
# The whole script is one compound command, read before it runs: bash reads a script as it goes,
# so editing this file while a part runs (hours) would otherwise make it run shifted text.
{

CACHE=${CACHE:-$HOME/.cache/headwise}
ROOT=${ROOT:-$CACHE/sweep/de-v7}
DATA=${DATA:-$CACHE/corpus/de}
START=${START:-models/en-de/base-checkpoint}
ANALYSIS=${ANALYSIS:-$START/analysis.json}
DEVICE=${DEVICE:-cpu}
# One precision for every point and control of a study, whatever machine trains which point:
# fp32 runs everywhere (bf16 autocast is 1.4-1.8x faster where the CPU has AVX-512 BF16 or AMX,
# and 26x slower where it has not: bench/results/2026-12-06-train-precision-avx2.md). de-v6
# trained in bf16 (PRECISION=bf16 to continue it); de-v7 pins fp32.
PRECISION=${PRECISION:-fp32}
THREADS=${THREADS:-1}
STEPS=${STEPS:-1000}
ENC_LAMBDAS=${ENC_LAMBDAS:-0 0.005 0.02 0.002 0.01 0.003 0.05}
ALL_LAMBDAS=${ALL_LAMBDAS:-0 0.01 0.04 0.02 0.005}
HEADLINE_ENC=${HEADLINE_ENC:-}
HEADLINE_ALL=${HEADLINE_ALL:-}
# The base's from-scratch training run (de-base-v5: random initialisation, inverse-sqrt schedule),
# whose recorded options the from-scratch control trains with.
BASE_RUN=${BASE_RUN:-models/en-de/training/de-base-v5}
# Settling in the run itself (SETTLE_INLINE=1, the default from de-v7 on): every L0 point and
# control trains STEPS + SETTLE_STEPS steps, the loss adding the settle push (prune
# --settle-steps / --settle-push) in the last SETTLE_STEPS, so one run per point gives a settled
# result. The inverse-sqrt and constant schedules do not depend on --steps and a run resumes
# exactly, so this is the same path as de-v6's two stages (STEPS, then the `settle` stage's
# continuation); SETTLE_INLINE=0 trains STEPS only, for `settle` to continue (de-v6).
SETTLE_INLINE=${SETTLE_INLINE:-1}
SETTLE_STEPS=${SETTLE_STEPS:-250}
SETTLE_PUSH=${SETTLE_PUSH:-0.05}
if [[ "$SETTLE_INLINE" == 1 ]]; then
  POINT_STEPS=$((STEPS + SETTLE_STEPS))
  l0=(--steps "$POINT_STEPS" --settle-steps "$SETTLE_STEPS" --settle-push "$SETTLE_PUSH")
else
  POINT_STEPS=$STEPS
  l0=(--steps "$STEPS")
fi
# The from-scratch control's updates: the base's (de-base-v5 5,250 + de-base-v6 1,200, from
# models/en-de/training) plus one L0 point's.
SCRATCH_STEPS=${SCRATCH_STEPS:-$((5250 + 1200 + POINT_STEPS))}
OUT_DIR=${OUT_DIR:-models/en-de/sweep/$(basename "$ROOT")}  # the report's JSON + PNG (de-v6's: models/en-de/sweep)
# The settle stage (for a ROOT trained with SETTLE_INLINE=0): SETTLE_STEPS more steps per point
# with the settle push, each point resuming from a copy of its run's last checkpoint
# (hard-linked) in SETTLE_ROOT, so ROOT's records stay as they are; every point and its control
# then has STEPS + SETTLE_STEPS updates.
SETTLE_ROOT=${SETTLE_ROOT:-$ROOT-settled}
MD=${MD:-docs/pruning-results.md}
RECORDS=${RECORDS:-models/en-de/sweep/records/$(basename "$ROOT")}
SETTLE_RECORDS=$(dirname "$RECORDS")/$(basename "$SETTLE_ROOT")

train() { /usr/bin/python3 trainer/headwise-train "$@"; }
seeds_in() {  # the seeds other than 1 that the points of setting $2 in sweep directory $1 have:
  # "2,3", or "" when none (ls fails then, which pipefail would make this script's exit)
  (cd "$1" && { ls -d "$2"-*-seed* 2>/dev/null || true; } | sed 's/.*-seed//' | sort -u | paste -sd,)
}
copy_results() {  # the result files of every point of sweep directory $1 that has a result
  # (eval.json, run/{run,history}.json, run/prune_log.jsonl; no checkpoint) and the rank records,
  # into sweep directory $2; with $3 = keep, what $2 already has stays as it is
  local from=$1 to=$2 keep=${3:-} d name f
  [[ -d "$from" ]] || return 0
  for d in "$from"/*/; do
    name=$(basename "$d")
    if [[ "$name" == rank ]]; then
      mkdir -p "$to/rank" && cp -p ${keep:+-n} "$d"*.json "$to/rank/" 2>/dev/null || true
      continue
    fi
    [[ -f "$d/eval.json" ]] || continue
    [[ -n "$keep" && -f "$to/$name/eval.json" ]] && continue
    for f in run/run.json run/history.json run/prune_log.jsonl eval.json; do
      [[ -f "$d/$f" ]] || continue
      mkdir -p "$(dirname "$to/$name/$f")"
      # Two streams started together restore the same files: with keep, a copy that lost the
      # race to the other stream's (cp -n: "File exists") leaves the file there, which is fine.
      cp -p ${keep:+-n} "$d/$f" "$to/$name/$f" || [[ -n "$keep" && -f "$to/$name/$f" ]]
    done
  done
  return 0
}
# ROOT (or $1) -> RECORDS (or $2) after each point; the reverse first on a machine whose ROOT
# lacks them (a new cache), so that no point with a result is trained again.
archive() { copy_results "${1:-$ROOT}" "${2:-$RECORDS}"; }
restore() { copy_results "${2:-$RECORDS}" "${1:-$ROOT}" keep; }
runs() { train sweep runs "$@" --precision "$PRECISION"; archive; }
settle_runs() { train sweep runs "$@" --precision "$PRECISION"; archive "$SETTLE_ROOT" "$SETTLE_RECORDS"; }
common=(--root "$ROOT" --data "$DATA" --vocab "$START" --threads "$THREADS")
headline() {  # setting $1's headline lambda (the point its claim rests on): HEADLINE_ENC /
  # HEADLINE_ALL when set, else what `sweep pick` chooses from ROOT's records; fails without one
  local h
  [[ "$1" == enc ]] && h=${HEADLINE_ENC:-} || h=${HEADLINE_ALL:-}
  [[ -n "$h" ]] || h=$(train sweep pick "$1" --root "$ROOT" --field lambda) || return 1
  echo "$h"
}
expected() {  # the point names the report lists as missing until they have a result: every
  # lambda, and phase 2's points once the headline lambdas can be named
  local names="base" l s h
  for l in $ENC_LAMBDAS; do names+=",enc-$l"; done
  for l in $ALL_LAMBDAS; do names+=",all-$l"; done
  for s in enc all; do
    h=$(headline "$s" 2>/dev/null) || continue
    for l in 0 "$h"; do names+=",$s-$l-seed2,$s-$l-seed3"; done
    [[ "$s" == all ]] && names+=",scratch-all-$h"
  done
  echo "$names"
}

case "${1:-}" in
  enc|all|rank|phase2) restore ;;
  settle) restore "$SETTLE_ROOT" "$SETTLE_RECORDS" ;;
esac
case "${1:-}" in
  enc|all)
    [[ "$1" == enc ]] && lambdas=$ENC_LAMBDAS || lambdas=$ALL_LAMBDAS
    # The unpruned base, scored once (greedy and beam 4) as a reference.
    runs "${common[@]}" --lambdas "" --reference "base=$START"
    for l in $lambdas; do
      runs "${common[@]}" --from "$START" --device "$DEVICE" "${l0[@]}" \
        --settings "$1" --lambdas "$l"
    done
    ;;
  rank)
    # AttnLRP, signed relevance, Michel, confidence and 5 random orders; greedy only.
    train sweep rank "${common[@]}" --analysis "$ANALYSIS" --model "$START" --searches greedy \
      --enc-keep 24,10 --all-keep 48,24
    archive
    ;;
  phase2)
    # The headline lambdas default to what `sweep pick` chooses from the records (the points
    # the claims rest on); set HEADLINE_ENC / HEADLINE_ALL to override.
    HEADLINE_ENC=$(headline enc)
    HEADLINE_ALL=$(headline all)
    if [[ ! -f "$BASE_RUN/run.json" ]]; then
      echo "pruning-study: BASE_RUN=$BASE_RUN has no run.json (the from-scratch control copies" \
           "the base run's recorded options)" >&2
      exit 2
    fi
    # One point per call (in the order one call over the lambdas and seeds takes them: seed by
    # seed, the control first), so that each is archived to RECORDS as soon as it has its result.
    for setting in enc all; do
      [[ $setting == enc ]] && headline_lambda=$HEADLINE_ENC || headline_lambda=$HEADLINE_ALL
      for seed in 2 3; do
        for lambda in 0 "$headline_lambda"; do
          runs "${common[@]}" --from "$START" --device "$DEVICE" "${l0[@]}" \
            --settings "$setting" --lambdas "$lambda" --seeds "$seed"
        done
      done
    done
    runs "${common[@]}" --from "$START" --device "$DEVICE" --lambdas "" \
      --scratch "scratch-all-$HEADLINE_ALL=@all-$HEADLINE_ALL" --base-run "$BASE_RUN" \
      --scratch-steps "$SCRATCH_STEPS" --steps "$POINT_STEPS"
    ;;
  settle)
    if [[ "$SETTLE_INLINE" == 1 ]]; then
      echo "pruning-study: with SETTLE_INLINE=1 every point settles in its own run; the settle" \
           "stage continues a ROOT trained with SETTLE_INLINE=0 (de-v6): set it" >&2
      exit 2
    fi
    for d in "$ROOT"/enc-* "$ROOT"/all-*; do
      [[ -d "$d/run" ]] || continue
      dst="$SETTLE_ROOT/$(basename "$d")/run"
      [[ -d "$dst" ]] && continue  # copied before: the point resumes its own settle run
      last=$(find "$d/run" -maxdepth 1 -name 'ckpt-*.pt' | sort -V | tail -1)
      [[ -n "$last" ]] || { echo "pruning-study: $d/run has no checkpoint" >&2; exit 2; }
      mkdir -p "$dst.tmp"
      cp --link "$last" "$dst.tmp/" && cp "$d/run/prune_log.jsonl" "$d/run/run.json" "$dst.tmp/"
      mv "$dst.tmp" "$dst"
    done
    settle=(--root "$SETTLE_ROOT" --data "$DATA" --vocab "$START" --threads "$THREADS"
            --from "$START" --device "$DEVICE" --steps "$((STEPS + SETTLE_STEPS))"
            --settle-steps "$SETTLE_STEPS" --settle-push "$SETTLE_PUSH")
    settle_runs "${settle[@]}" --lambdas "" --reference "base=$START"
    # Rank pruning fine-tunes nothing: its records are the same in both directories.
    if [[ -d "$ROOT/rank" && ! -d "$SETTLE_ROOT/rank" ]]; then
      cp -r "$ROOT/rank" "$SETTLE_ROOT/rank.tmp" && mv "$SETTLE_ROOT/rank.tmp" "$SETTLE_ROOT/rank"
    fi
    # First the points the claims rest on (each setting's control and headline lambda, every
    # seed that ROOT has), so that a stage stopped part-way has already settled them; then the
    # rest of each curve (points with a result are skipped).
    for setting in enc all; do
      h=$(headline "$setting")
      seeds=$(seeds_in "$SETTLE_ROOT" "$setting")
      settle_runs "${settle[@]}" --settings "$setting" --lambdas "0,$h" \
        --seeds "1${seeds:+,$seeds}"
    done
    for setting in enc all; do
      [[ "$setting" == enc ]] && lambdas=$ENC_LAMBDAS || lambdas=$ALL_LAMBDAS
      settle_runs "${settle[@]}" --settings "$setting" --lambdas "${lambdas// /,}"
      seeds=$(seeds_in "$SETTLE_ROOT" "$setting")
      [[ -z "$seeds" ]] && continue
      for name in $(cd "$SETTLE_ROOT" && ls -d "$setting"-*-seed* | sed 's/-seed[0-9]*$//' | sort -u); do
        settle_runs "${settle[@]}" --settings "$setting" --lambdas "${name#"$setting"-}" \
          --seeds "$seeds"
      done
    done
    # The from-scratch control, once phase 2 has trained it to SCRATCH_STEPS: continued to
    # SCRATCH_STEPS + SETTLE_STEPS (the updates of base + pruning + settling) with the layout it
    # was trained with, which must still be the settled point's.
    for d in "$ROOT"/scratch-*; do
      [[ -d "$d/run" ]] || continue
      name=$(basename "$d")
      spec=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["train_args"]["head_layout"])' "$d/run/run.json")
      if [[ ! -d "$SETTLE_ROOT/$name/run" ]]; then
        if [[ ! -e "$d/run/ckpt-$SCRATCH_STEPS.pt" ]]; then
          echo "pruning-study: $name has not reached step $SCRATCH_STEPS yet (run phase2); not continued" >&2
          continue
        fi
        mkdir -p "$SETTLE_ROOT/$name/run.tmp"
        cp --link "$d/run/ckpt-$SCRATCH_STEPS.pt" "$SETTLE_ROOT/$name/run.tmp/"
        cp "$d/run/run.json" "$d/run/history.json" "$d/run/train.log" "$SETTLE_ROOT/$name/run.tmp/"
        mv "$SETTLE_ROOT/$name/run.tmp" "$SETTLE_ROOT/$name/run"
      fi
      point=${name#scratch-}
      now=$(train sweep pick all --root "$SETTLE_ROOT" --field name 2>/dev/null || true)
      if [[ ! -f "$SETTLE_ROOT/$point/eval.json" ]]; then
        echo "pruning-study: $point is not settled yet; $name not continued" >&2
        continue
      fi
      settled=$(/usr/bin/python3 -c 'import sys
sys.path.insert(0, "trainer")
from headwise_trainer.sweep.runs import point_layout_spec
print(point_layout_spec(sys.argv[1], sys.argv[2]))' "$SETTLE_ROOT" "$point")
      if [[ "$settled" != "$spec" ]]; then
        echo "pruning-study: settled $point keeps other heads ($settled) than $name was trained" \
             "with ($spec): its from-scratch control must be trained anew" >&2
        continue
      fi
      if [[ -n "$now" && "$now" != "$point" ]]; then
        echo "pruning-study: note: sweep pick all now names $now, not $point" >&2
      fi
      settle_runs "${settle[@]}" --lambdas "" --scratch "$name=$spec" --base-run "$BASE_RUN" \
        --scratch-steps "$((SCRATCH_STEPS + SETTLE_STEPS))"
    done
    ;;
  archive)
    archive
    ;;
  restore)
    restore
    ;;
  report)
    train sweep report --root "$ROOT" --out-dir "$OUT_DIR" --md "$MD" --analysis "$ANALYSIS" \
      --expect "$(expected)" ${BASE_RUN:+--base-run "$BASE_RUN"}
    ;;
  *)
    echo "usage: $0 enc|all|rank|phase2|settle|archive|restore|report  (see the comment at the top)" >&2
    exit 2
    ;;
esac
exit
}
