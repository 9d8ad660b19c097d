// runtime/src/kernels/int8_gemm_neon_dotprod.h: the aarch64 int8 family for CPUs with the
// dot-product extension (SDOT, FEAT_DotProd: Cortex-A55/A75/A76 and later, Raspberry Pi 5).
// int8_gemm.h lists the families and their common contract. Compiled on aarch64 only; the
// SDOT code is compiled for armv8.2-a+dotprod in its own functions and runs only where
// Int8NeonDotprodAvailable() (every CPU with dotprod implements ARMv8.2).
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_DOTPROD_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_DOTPROD_H_

#include <cstddef>

#include "kernels/int8_gemm.h"

#if defined(__aarch64__)
#define HEADWISE_INT8_NEON_DOTPROD 1

namespace headwise::kernels {

// cpuinfo_has_arm_neon_dot() (the kernel's HWCAP asimddp); false if cpuinfo cannot initialise.
bool Int8NeonDotprodAvailable();
// Tiles of 4 rows x 4 output channels, 16 inputs per SDOT.
void Int8GemmNeonDotprod(const Int8GemmArgs& a, size_t begin, size_t end);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_DOTPROD_H_
