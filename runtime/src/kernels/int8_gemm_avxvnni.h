// runtime/src/kernels/int8_gemm_avxvnni.h: the x86 AVX-VNNI int8 family (int8_gemm.h lists the
// families and their common contract), for CPUs with the VEX-encoded vpdpbusd on 256-bit
// registers but without AVX-512 (Alder Lake and later client cores, Sierra Forest). Compiled on
// x86 only; run only when CpuX86().avx_vnni (kernels/cpu_x86.h).
//
// The same arithmetic as the AVX-512 VNNI family (w read in place as the unsigned w + 128,
// 128 * sum_k x[r, k] subtracted, wrapping int32 sums) on 32 bytes at a time, in tiles of
// 2 rows x 4 output channels (8 accumulators: 16 vector registers), finished 8 at a time with
// the reference's operations.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVXVNNI_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVXVNNI_H_

#include <cstddef>

#include "kernels/int8_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define HEADWISE_INT8_AVXVNNI 1

namespace headwise::kernels {

bool Int8AvxVnniAvailable();  // CpuX86().avx_vnni
void Int8GemmAvxVnni(const Int8GemmArgs& a, size_t begin, size_t end);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVXVNNI_H_
