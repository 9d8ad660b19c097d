# Shared part of the Debian cross toolchain files (aarch64-linux-gnu.cmake, armhf-linux-gnu.cmake).
# Expects HEADWISE_CROSS_ARCH (aarch64 | armhf), HEADWISE_CROSS_TRIPLET and HEADWISE_QEMU.
#
# The sysroot is build/sysroot-ARCH from platforms/sysroot.sh (Debian's arm64/armhf packages,
# unpacked). Override with -DHEADWISE_SYSROOT=... or the HEADWISE_SYSROOT environment variable.
# Compilers are Debian's cross gcc; they bring libc/libstdc++ headers and link libraries.
# Tests run under qemu-user with -L sysroot (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
if(NOT HEADWISE_SYSROOT)
  if(DEFINED ENV{HEADWISE_SYSROOT})
    set(HEADWISE_SYSROOT "$ENV{HEADWISE_SYSROOT}")
  else()
    get_filename_component(HEADWISE_SYSROOT
      "${CMAKE_CURRENT_LIST_DIR}/../../build/sysroot-${HEADWISE_CROSS_ARCH}" ABSOLUTE)
  endif()
endif()
if(NOT EXISTS "${HEADWISE_SYSROOT}/.headwise-sysroot")
  message(FATAL_ERROR "headwise: no sysroot at ${HEADWISE_SYSROOT}; "
                      "run platforms/sysroot.sh ${HEADWISE_CROSS_ARCH}")
endif()
# try_compile projects re-read this file; pass the sysroot on to them.
set(HEADWISE_SYSROOT "${HEADWISE_SYSROOT}" CACHE PATH "Cross sysroot (platforms/sysroot.sh)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES HEADWISE_SYSROOT)

set(CMAKE_SYSROOT "${HEADWISE_SYSROOT}")
set(CMAKE_C_COMPILER ${HEADWISE_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${HEADWISE_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${HEADWISE_CROSS_TRIPLET})

# Libraries, headers and CMake packages come from the sysroot only; programs (flatc,
# spm_train, python3, qemu) from the build machine.
# A -DCMAKE_FIND_ROOT_PATH=<dir> given by the user (e.g. an unpacked headwise .deb) is kept.
list(APPEND CMAKE_FIND_ROOT_PATH "${HEADWISE_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The linker resolves the Debian libraries' own dependencies (libcpuinfo.so.0 for
# libXNNPACK.so.0, ...) inside the sysroot.
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT
    "-Wl,-rpath-link,${HEADWISE_SYSROOT}/usr/lib/${HEADWISE_CROSS_TRIPLET} -Wl,-rpath-link,${HEADWISE_SYSROOT}/lib/${HEADWISE_CROSS_TRIPLET}")
endforeach()

find_program(HEADWISE_QEMU_PROGRAM ${HEADWISE_QEMU})
if(HEADWISE_QEMU_PROGRAM)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${HEADWISE_QEMU_PROGRAM};-L;${HEADWISE_SYSROOT}")
endif()
