#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, AddressSanitizer + UBSan, coverage over the whole
# library) in build/fuzz and runs each for SECONDS (default 60), starting from the committed
# seeds (fuzz/corpus/<target>) and regressions (fuzz/regressions/<target>). New corpus inputs
# stay in build/fuzz/runs/<target>/corpus; a crash, sanitizer report, FUZZ_CHECK failure,
# timeout or out-of-memory input is copied into fuzz/regressions/<target>/ (commit it with its
# fix: every build replays it as the ctest fuzz.<target>.replay).
# Prints one line per target: executions, seconds, executions per second, findings.
# Exits 1 when any target found something.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]   (targets: model_loader checkpoint_reader text_input)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(model_loader checkpoint_reader text_input)
cc=${HEADWISE_FUZZ_CC:-clang-14}
cxx=${HEADWISE_FUZZ_CXX:-clang++-14}
build=build/fuzz
# Symbolized stacks in reports (llvm-14 from scripts/setup.sh).
symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
[[ -x "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$symbolizer}"

# Tests stay configured (only the fuzzers are built here), so scripts/test.sh can build the
# hostile-file tests and the replays in this ASan + UBSan tree too.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DHEADWISE_FUZZ=ON \
  -DHEADWISE_BUILD_TESTS=ON -DHEADWISE_BUILD_BENCH=OFF -DHEADWISE_BUILD_TRAINER_TESTS=OFF \
  -DHEADWISE_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/%/_fuzzer}"

found=0
summary=()
for t in "${targets[@]}"; do
  work="$build/runs/$t"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  inputs=("$work/corpus" "fuzz/corpus/$t")
  [[ -d "fuzz/regressions/$t" ]] && inputs+=("fuzz/regressions/$t")
  echo "fuzz: $t for ${seconds}s"
  start=$(date +%s)
  set +e
  "$build/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "${inputs[@]}" >"$work/log" 2>&1
  rc=$?
  set -e
  secs=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
  artifacts=("$work"/artifacts/*)
  findings=0
  if [[ -e "${artifacts[0]}" ]]; then
    mkdir -p "fuzz/regressions/$t"
    for a in "${artifacts[@]}"; do
      cp "$a" "fuzz/regressions/$t/"
      findings=$((findings + 1))
    done
  fi
  if ((rc != 0 || findings > 0)); then
    found=1
    echo "fuzz: $t FAILED (exit $rc, $findings input(s) copied to fuzz/regressions/$t/):"
    grep -E -A12 "ERROR: |FUZZ_CHECK|runtime error|deadly signal|timeout|out-of-memory" "$work/log" | head -n 40
  fi
  line="$t: ${execs:-0} executions in ${secs}s ($(( ${execs:-0} / (secs > 0 ? secs : 1) ))/s), corpus $(ls "$work/corpus" | wc -l) new inputs, $findings finding(s)"
  summary+=("$line")
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$found"
