#!/usr/bin/env bash
# One entry point for the ARM cross builds (platforms/README.md):
#   platforms/cross.sh aarch64|armhf build     sysroot + cross compile into build/cross-ARCH
#   platforms/cross.sh aarch64|armhf test      build, then the whole ctest suite under qemu-user
#   platforms/cross.sh aarch64|armhf package   build, then the Raspberry Pi .deb (CPack)
#   platforms/cross.sh aarch64|armhf int8      only what the int8 kernel tests need (runtime_test,
#                                              headwise-translate, make_test_model), then the
#                                              platforms.int8_* tests under qemu CPU models (CI's
#                                              armhf check)
# Environment: HEADWISE_JOBS (parallel jobs, default nproc), HEADWISE_CROSS_BUILD_DIR
# (default build/cross-ARCH), HEADWISE_CTEST_ARGS (extra ctest arguments, e.g. "-R e2e").
# The build is a shared libheadwise (what the .deb ships), -O2 like the host's default build
# (GCC 12's -O3 raises a false -Wnull-dereference in the tests), warnings as errors;
# Python trainer tests and benchmarks are host-only and left out.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
arch="${1:-}" step="${2:-}"
case "$arch" in
  aarch64) toolchain="$here/toolchains/aarch64-linux-gnu.cmake" ;;
  armhf) toolchain="$here/toolchains/armhf-linux-gnu.cmake" ;;
  *) echo "usage: $0 aarch64|armhf build|test|package|int8" >&2; exit 2 ;;
esac
case "$step" in build | test | package | int8) ;; *) echo "usage: $0 $arch build|test|package|int8" >&2; exit 2 ;; esac
jobs="${HEADWISE_JOBS:-$(nproc)}"
build="${HEADWISE_CROSS_BUILD_DIR:-$root/build/cross-$arch}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"

bash "$root/scripts/setup.sh" --arm
sysroot="$(bash "$here/sysroot.sh" "$arch" | tail -1)"

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DHEADWISE_SYSROOT="$sysroot" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DBUILD_SHARED_LIBS=ON -DHEADWISE_WERROR=ON \
  -DHEADWISE_BUILD_BENCH=OFF -DHEADWISE_BUILD_TRAINER_TESTS=OFF >/dev/null
if [[ "$step" == int8 ]]; then
  cmake --build "$build" -j "$jobs" --target runtime_test headwise-translate make_test_model
else
  cmake --build "$build" -j "$jobs"
fi

case "$step" in
  test)
    # Every test binary runs under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR); the Python
    # fixtures run on the host and call the ARM converter through its qemu wrapper.
    # shellcheck disable=SC2086
    ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 1800 ${HEADWISE_CTEST_ARGS:-}
    ;;
  int8)
    # ctest adds the api_models fixture (api.make_test_model) the CLI checks need.
    ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 1800 -R '^platforms\.int8_(kernels|cli)\.'
    ;;
  package)
    (cd "$build" && cpack -G DEB -B "$build/package" >/dev/null)
    ls "$build"/package/headwise_*.deb
    ;;
esac
