# Cross toolchain: 64-bit ARM Linux (Raspberry Pi OS 64-bit, Debian arm64; ARMv8-A baseline,
# no -march/-mcpu so the binaries run on any ARMv8-A core: Cortex-A53 upwards).
# Usage: cmake -DCMAKE_TOOLCHAIN_FILE=platforms/toolchains/aarch64-linux-gnu.cmake ...
#        (platforms/cross.sh aarch64 build does this.)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(HEADWISE_CROSS_ARCH aarch64)
set(HEADWISE_CROSS_TRIPLET aarch64-linux-gnu)
set(HEADWISE_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake)
