// runtime/src/kernels/int8_gemm_neon_armv7.h: the 32-bit ARM int8 family (armhf) for CPUs with
// NEON (Cortex-A7/A8/A9/A15/A53/A72 in 32-bit mode: Raspberry Pi 2 and later). int8_gemm.h
// lists the families and their common contract. Compiled on 32-bit ARM only. Debian's armhf
// baseline is ARMv7-A + VFPv3-D16 without NEON, so the NEON code is compiled for fpu=neon in
// its own functions (whatever -mfpu the build uses) and runs only where
// Int8NeonArmv7Available().
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_ARMV7_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_ARMV7_H_

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm.h"

#if defined(__arm__) && !defined(__aarch64__)
#define HEADWISE_INT8_NEON_ARMV7 1

namespace headwise::kernels {

// cpuinfo_has_arm_neon() (the kernel's HWCAP neon); false if cpuinfo cannot initialise.
bool Int8NeonArmv7Available();
// Tiles of 2 rows x 4 output channels (16 quad registers), 16 inputs per step: VMULL.S8 +
// VMLAL.S8 (two products per int16 lane, |x| <= 127 so no overflow) and VPADAL.S16.
void Int8GemmNeonArmv7(const Int8GemmArgs& a, size_t begin, size_t end);
// QuantizeRowsReference's bytes and scales. ARMv7 NEON flushes subnormals to zero and has no
// round-to-nearest conversion, so: rows whose largest |x| is under 2^-100 go to the reference
// loop (there a subnormal x can round to a nonzero byte; above it x * 127 / max < 2^-19 for
// every subnormal x, which rounds to 0 either way), and rounding adds 1.5 * 2^23 (exact
// round-half-even for |v| <= 127, NEON's fixed round-to-nearest mode).
void QuantizeRowsNeonArmv7(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                           float* scale);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_ARMV7_H_
