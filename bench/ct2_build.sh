#!/usr/bin/env bash
# Builds CTranslate2 (the peer that bench/throughput.py --ct2 compares with) from a source tree
# with Debian's packages, outside this repository, and prints the directory to pass as --ct2.
# Never part of headwise's build or tests.
#
#   bench/ct2_build.sh SRC OUT        # SRC: a CTranslate2 4.x source tree (no submodules needed)
#   bench/throughput.py --ct2 OUT/dist --batches 32 --threads 1 ...
#
# SRC is copied to OUT/src and patched there (SRC is left as it is):
#  - spdlog and cpu_features come from Debian (libspdlog-dev, libcpu-features-dev) instead of the
#    third_party/ submodules, which a plain checkout or archive lacks;
#  - the oneDNN convolution of ops/conv1d_cpu.cc (Whisper only) is compiled out: Debian's oneDNN
#    2.6 lacks the 3.x API it is written for; the GEMM primitives that translation uses
#    (dnnl_sgemm, dnnl_gemm_u8s8s32, dnnl_gemm_s8s8s32) are in 2.6.
# Backend: oneDNN (WITH_DNNL, GNU OpenMP), no MKL (not in Debian main); no CLI, no tests. Then the
# Python package (python3-pybind11) is built in place. Needs: apt-get install libdnnl-dev
# libspdlog-dev libcpu-features-dev python3-pybind11 pybind11-dev ninja-build cmake.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 CTRANSLATE2_SOURCE OUT_DIR" >&2; exit 2; }
src=$(realpath "$1"); out=$(realpath -m "$2")
[[ -f "$src/CMakeLists.txt" && -d "$src/python" ]] || { echo "$src: not a CTranslate2 source tree" >&2; exit 1; }
for pkg in libdnnl-dev libspdlog-dev libcpu-features-dev python3-pybind11; do
  dpkg -s "$pkg" > /dev/null 2>&1 || { echo "missing Debian package $pkg (apt-get install $pkg)" >&2; exit 1; }
done
mkdir -p "$out"
rm -rf "$out/src" && cp -a "$src" "$out/src"
cd "$out/src"
patch_line() {  # file, exact old text, new text: fail loudly when the source differs
  /usr/bin/python3 - "$@" <<'PY'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
if old not in text:
    sys.exit(f"{path}: expected {old!r}; is this CTranslate2 4.x?")
open(path, "w").write(text.replace(old, new, 1))
PY
}
patch_line CMakeLists.txt 'add_subdirectory(third_party/spdlog EXCLUDE_FROM_ALL)' 'find_package(spdlog REQUIRED)'
patch_line CMakeLists.txt 'add_subdirectory(third_party/cpu_features EXCLUDE_FROM_ALL)' 'find_package(CpuFeatures REQUIRED)'
patch_line CMakeLists.txt 'list(APPEND LIBRARIES cpu_features)' 'list(APPEND LIBRARIES CpuFeatures::cpu_features)'
patch_line src/ops/conv1d_cpu.cc '#ifdef CT2_WITH_DNNL' '#if 0  // Debian oneDNN 2.6: no 3.x convolution API'
cmake -S . -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWITH_MKL=OFF -DWITH_DNNL=ON \
  -DOPENMP_RUNTIME=COMP -DBUILD_CLI=OFF -DCMAKE_INSTALL_PREFIX="$out/install"
cmake --build "$out/build" -j"$(nproc)"
cmake --install "$out/build" > /dev/null
(cd python && CTRANSLATE2_ROOT="$out/install" /usr/bin/python3 setup.py build_ext --inplace > "$out/python-build.log")
mkdir -p "$out/dist"
ln -sfn "$out/src/python" "$out/dist/python"
ln -sfn "$out/install/lib" "$out/dist/lib"
PYTHONPATH="$out/dist/python" LD_LIBRARY_PATH="$out/dist/lib" /usr/bin/python3 -c \
  'import ctranslate2; print("CTranslate2", ctranslate2.__version__, sorted(ctranslate2.get_supported_compute_types("cpu")))'
echo "$out/dist"
