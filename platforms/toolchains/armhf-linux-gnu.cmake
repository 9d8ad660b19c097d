# Cross toolchain: 32-bit ARM hard-float Linux (Raspberry Pi OS 32-bit / Debian armhf).
# Debian's armhf baseline is ARMv7-A + VFPv3-D16; NEON with VFPv4 is added for the
# Raspberry Pi 2 and later (Cortex-A7/A53/A72/A76). Not for the Pi Zero / Pi 1 (ARMv6).
# XNNPACK picks its NEON kernels at run time either way; this only affects headwise's own code.
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(HEADWISE_CROSS_ARCH armhf)
set(HEADWISE_CROSS_TRIPLET arm-linux-gnueabihf)
set(HEADWISE_QEMU qemu-arm)
# -Wno-psabi: GCC notes that std::map/nlohmann_json argument passing changed in GCC 7.1; every
# object here is built with GCC 12, so the note is noise (hundreds of lines per file).
set(CMAKE_C_FLAGS_INIT "-mfpu=neon-vfpv4 -mfloat-abi=hard")
set(CMAKE_CXX_FLAGS_INIT "-mfpu=neon-vfpv4 -mfloat-abi=hard -Wno-psabi")
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake)
