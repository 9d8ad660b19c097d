#!/usr/bin/env bash
# Sets everything up and runs every test: installs the Debian packages (scripts/setup.sh),
# configures and builds with the default preset, then runs ctest (C++ GoogleTest suites,
# the C compile test, CLI tests, end-to-end runtime-vs-PyTorch tests and the pytest suite),
# then builds the aarch64 cross build and runs the C++ suite again under qemu-user.
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
