#!/usr/bin/env bash
# The headwise-convert binary end to end: exact exit codes, nothing written on failure,
# no overwrite without --force, the checkpoint directory untouched, inspect --json.
# Usage: cli_smoke_test.sh HEADWISE_CONVERT MAKE_TEST_CHECKPOINT
set -u
convert=$1
make_checkpoint=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/hw_cli_XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

expect() {  # expect CODE DESCRIPTION -- COMMAND...
  local want=$1 what=$2
  shift 3
  "$@" >"$work/stdout" 2>"$work/stderr"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"
    sed 's/^/  stderr: /' "$work/stderr"
    failures=$((failures + 1))
  else
    echo "ok: $what (exit $got)"
  fi
}

"$make_checkpoint" "$work/ckpt" --gates || exit 1
(cd "$work/ckpt" && sha256sum * >"$work/ckpt.sha256")

expect 0 "--help" -- "$convert" --help
expect 2 "no arguments" -- "$convert"
expect 2 "unknown option" -- "$convert" "$work/ckpt" -o "$work/m.hwm" --bogus
expect 2 "missing -o" -- "$convert" "$work/ckpt"
expect 2 "malformed --keep-heads" -- "$convert" "$work/ckpt" -o "$work/m.hwm" --keep-heads "enc.0"
expect 1 "missing checkpoint" -- "$convert" "$work/none" -o "$work/m.hwm"
expect 1 "output inside the checkpoint" -- "$convert" "$work/ckpt" -o "$work/ckpt/m.hwm"
if [ -e "$work/m.hwm" ] || [ -e "$work/ckpt/m.hwm" ]; then
  echo "FAIL: a failed run wrote an output"; failures=$((failures + 1))
fi

expect 0 "convert" -- "$convert" "$work/ckpt" -o "$work/m.hwm"
grep -q "heads    18 of 24 kept" "$work/stdout" || { echo "FAIL: summary"; cat "$work/stdout"; failures=$((failures + 1)); }
cp "$work/m.hwm" "$work/first.hwm"
expect 1 "existing output without --force" -- "$convert" "$work/ckpt" -o "$work/m.hwm" --keep-heads "*.*=all"
cmp -s "$work/m.hwm" "$work/first.hwm" || { echo "FAIL: output changed without --force"; failures=$((failures + 1)); }
expect 0 "--force" -- "$convert" "$work/ckpt" -o "$work/m.hwm" --keep-heads "*.*=all" --force
cmp -s "$work/m.hwm" "$work/first.hwm" && { echo "FAIL: --force did not replace the output"; failures=$((failures + 1)); }

expect 0 "inspect --json" -- "$convert" inspect "$work/first.hwm" --json
/usr/bin/python3 - "$work/stdout" <<'PY' || failures=$((failures + 1))
import json, sys
report = json.load(open(sys.argv[1]))
kept = [b["kept_heads"] for b in report["attention"]]
assert kept[1] == [0, 2] and kept[2] == [], kept
assert report["heads"] == {"kept": 18, "total": 24}, report["heads"]
print("ok: inspect --json reports the kept heads")
PY
expect 1 "inspect a non-model" -- "$convert" inspect "$work/ckpt/vocab.json"

(cd "$work/ckpt" && sha256sum --quiet -c "$work/ckpt.sha256") || { echo "FAIL: checkpoint modified"; failures=$((failures + 1)); }
[ "$(ls "$work/ckpt" | wc -l)" -eq 5 ] || { echo "FAIL: files added to the checkpoint"; failures=$((failures + 1)); }
ls "$work" | grep -q '\.tmp\.' && { echo "FAIL: temporary file left behind"; failures=$((failures + 1)); }

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
