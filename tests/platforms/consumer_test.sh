#!/usr/bin/env bash
# find_package(headwise) from a separate project (examples/consumer): installs this build,
# configures and builds the consumer against the installed package, runs it, and compares its
# translations with the build tree's headwise-translate.
#   Host: installs into a prefix; the consumer uses CMAKE_PREFIX_PATH.
#   Cross (HW_TOOLCHAIN set): installs with DESTDIR under /usr, as the .deb would in a sysroot;
#   the consumer uses the same toolchain file with CMAKE_FIND_ROOT_PATH=<that root> and runs
#   under HW_EMULATOR (qemu-user -L sysroot).
# Usage: consumer_test.sh BUILD_DIR CONSUMER_SOURCE MODEL TRANSLATE_COMMAND
# Environment: HW_TRIPLET (multiarch dir), HW_TOOLCHAIN, HW_SYSROOT, HW_EMULATOR (cross only).
set -euo pipefail
build=$1 consumer=$2 model=$3 translate=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/hw_consumer_XXXXXX")
trap 'rm -rf "$work"' EXIT
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)

if [[ -n "${HW_TOOLCHAIN:-}" ]]; then
  root="$work/stage"
  DESTDIR="$root" cmake --install "$build" --prefix /usr >/dev/null
  libdir="$root/usr/lib/$HW_TRIPLET"
  cmake -S "$consumer" -B "$work/build" "${gen[@]}" -DCMAKE_TOOLCHAIN_FILE="$HW_TOOLCHAIN" \
    -DHEADWISE_SYSROOT="$HW_SYSROOT" -DCMAKE_FIND_ROOT_PATH="$root" >"$work/configure.log" ||
    { cat "$work/configure.log"; exit 1; }
  # shellcheck disable=SC2206
  run=($HW_EMULATOR -E "LD_LIBRARY_PATH=$libdir")
else
  root="$work/prefix"
  cmake --install "$build" --prefix "$root" >/dev/null
  libdir="$root/lib/$HW_TRIPLET"
  cmake -S "$consumer" -B "$work/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$root" \
    >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
  run=(env "LD_LIBRARY_PATH=$libdir")
fi
grep -q "headwise" "$work/build/CMakeCache.txt"
found=$(sed -n 's/^headwise_DIR:PATH=//p' "$work/build/CMakeCache.txt")
case "$found" in
  "$root"/*) echo "ok: find_package(headwise) found $found" ;;
  *) echo "FAIL: find_package(headwise) found '$found', not the package under $root"; exit 1 ;;
esac
cmake --build "$work/build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }

texts=("Hello world." "Open the file, then close it.")
got=$("${run[@]}" "$work/build/headwise_consumer" "$model" "${texts[@]}")
want=$("$translate" -m "$model" "${texts[@]}")
if [[ -z "$want" || "$got" != "$want" ]]; then
  echo "FAIL: consumer printed"; echo "$got"; echo "headwise-translate printed"; echo "$want"
  exit 1
fi
echo "ok: the consumer's translations equal headwise-translate's ($(wc -l <<<"$got") lines)"
