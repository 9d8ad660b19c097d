// runtime/src/kernels/int8_gemm_neon.h: the aarch64 int8 family for every ARMv8-A CPU (NEON is
// part of the baseline; used where there is no dot-product extension: Cortex-A53/A72,
// Raspberry Pi 3/4), and the NEON activation quantizer both aarch64 families use. int8_gemm.h
// lists the families and their common contract. Compiled on aarch64 only.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_H_

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm.h"

#if defined(__aarch64__)
#define HEADWISE_INT8_NEON 1

namespace headwise::kernels {

// Tiles of 4 rows x 4 output channels, 16 inputs per step: SMULL + SMLAL2 (two int8 products
// per int16 lane: |x| <= 127 and |w| <= 128, so |sum| <= 32512 fits) and SADALP into int32.
void Int8GemmNeon(const Int8GemmArgs& a, size_t begin, size_t end);
// QuantizeRowsReference's bytes and scales, 16 floats per step (FMAX, FMUL, FCVTNS: the same
// IEEE operations and the same round-to-nearest-even as lrintf in the default rounding mode).
// Int8Finish4Fn (int8_gemm_kernel.h) for both aarch64 families: four channels per FMLA, with
// the reference's multiply, fused multiply-add and std::max / std::min (as compare + select).
void Int8FinishTileNeon(const Int8GemmArgs& a, size_t r0, size_t nr, size_t o, const int32_t* sums,
                        size_t vector_k);
void QuantizeRowsNeon(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                      float* scale);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_NEON_H_
