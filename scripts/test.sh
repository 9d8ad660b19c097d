#!/usr/bin/env bash
# Sets everything up and runs every test: installs the Debian packages (scripts/setup.sh),
# configures and builds with the default preset, then runs ctest (C++ GoogleTest suites,
# the C compile test, CLI tests, end-to-end runtime-vs-PyTorch tests and the pytest suite),
# then builds the aarch64 cross build and runs the C++ suite again under qemu-user (and the
# armhf int8 kernel checks under qemu-arm), then the
# sanitizer checks: the concurrency tests under ThreadSanitizer (tsan preset), each libFuzzer
# target for 30 s (fuzz/run.sh), and the hostile-model tests and fuzz replays in that
# AddressSanitizer + UBSan build. The whole suite under ASan + UBSan is the asan-ubsan preset
# (not run here: a second full build).
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
cmake --preset default >/dev/null
cmake --build --preset default -- -j"$(nproc)"
ctest --preset default -j"$(nproc)" --timeout 900
# The aarch64 suite: cross-compiled into build/cross-aarch64 against a sysroot of Debian's arm64
# packages, every C++ test run under qemu-user (platforms/README.md; setup.sh --arm inside).
bash platforms/cross.sh aarch64 test
# armhf: only the int8 kernel checks (platforms.int8_kernels/cli.armhf-*: the NEON armv7 family
# against the reference loops under qemu-arm -cpu cortex-a7, and --verbose naming it); the whole
# armhf suite is run by hand (platforms/README.md, time).
bash platforms/cross.sh armhf int8
# ThreadSanitizer: 8 Translators sharing one Model (tests/concurrency).
cmake --preset tsan >/dev/null
cmake --build --preset tsan -- -j"$(nproc)"
ctest --preset tsan --timeout 900
# Fuzzing, 30 s per target; then, in the same clang ASan + UBSan tree, the hostile-model tests
# and the replay of every committed seed and regression (fuzz/README.md).
bash fuzz/run.sh 30
cmake --build build/fuzz -- -j"$(nproc)" hostile_test model_loader_replay \
  checkpoint_reader_replay text_input_replay
ctest --test-dir build/fuzz -R '^(hostile|fuzz)\.' -j"$(nproc)" --timeout 900 --output-on-failure
