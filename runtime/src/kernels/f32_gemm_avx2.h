// runtime/src/kernels/f32_gemm_avx2.h: the x86 AVX2 fp32 gemm family (f32_gemm.h lists the
// families and their common contract). Compiled on x86 only; run only when
// F32GemmAvx2Available() (CpuX86(): AVX2, FMA and F16C).
//
// Tiles of 4 rows x 3 output channels, one accumulator of 8 lanes per output (12 independent
// FMA chains, the 4 x loads and 3 weight loads of a chunk shared by the tile); 1-3 rows left
// take as many channels as keep 8 or more chains going (one row: 8 channels). Channels go in
// blocks of F32GemmBlockChannels, every row tile passing over a block before the next, so a
// matrix is read from memory once per call whatever the number of rows.
#ifndef HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX2_H_
#define HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX2_H_

#include <cstddef>

#include "kernels/f32_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define HEADWISE_F32_GEMM_AVX2 1

namespace headwise::kernels {

bool F32GemmAvx2Available();
void F32GemmAvx2(const F32GemmArgs& a, size_t begin, size_t end);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX2_H_
