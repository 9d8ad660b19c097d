// runtime/src/kernels/int8_gemm_avx2.h: the x86 AVX2 int8 family (int8_gemm.h lists the
// families and their common contract). Compiled on x86 only.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX2_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX2_H_

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define HEADWISE_INT8_AVX2 1

namespace headwise::kernels {

bool Int8Avx2Available();  // __builtin_cpu_supports("avx2")
// Four output channels at a time for every row; the remainder runs the reference loop.
void Int8GemmAvx2(const Int8GemmArgs& a, size_t begin, size_t end);
void QuantizeRowsAvx2(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                      float* scale);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX2_H_
