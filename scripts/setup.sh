#!/usr/bin/env bash
# Installs every dependency headwise needs from Debian's archive. Idempotent: packages already
# present are skipped, and apt-get runs only when something is missing.
# Usage: scripts/setup.sh [--arm]   (--arm adds the cross toolchains and qemu-user)
# openjdk-17-jdk-headless: javac/java/jni.h for the JNI binding's test (platforms/android).
# python3-cffi: generates the Python module's declarations from headwise.h (python/; its
# runtime needs only python3-cffi-backend); python3-setuptools, python3-pip: `pip install
# ./python` (python/tests/test_packaging.py).
# libblas3 liblapack3: the reference BLAS, to run the trainer tests without OpenBLAS (DEVELOPERS.md);
# libopenblas0-pthread keeps the higher alternatives priority, so torch still uses OpenBLAS.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libflatbuffers-dev flatbuffers-compiler
  libsentencepiece-dev sentencepiece
  nlohmann-json3-dev googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-numpy python3-sentencepiece python3-pytest python3-tqdm python3-matplotlib
  python3-cffi python3-setuptools python3-pip
  libopenblas0-pthread libblas3 liblapack3
  openjdk-17-jdk-headless
  clang-14 libclang-rt-14-dev llvm-14
)
# The parallel corpus (trainer/headwise-train data) needs no packages installed: it fetches the
# .debs that trainer/data/LANG.lock pins with apt-get download and unpacks them in its cache.
if [[ "${1:-}" == "--arm" ]]; then
  PACKAGES+=(g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user dpkg-dev)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present"
fi
