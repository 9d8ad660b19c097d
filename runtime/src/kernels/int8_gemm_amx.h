// runtime/src/kernels/int8_gemm_amx.h: the x86 AMX int8 family (int8_gemm.h lists the families
// and their common contract), for products of many rows (batches, beams, whole sentences).
// Compiled on x86 only; run only when CpuX86().amx_int8 (kernels/cpu_x86.h), which also means
// AVX-512 VNNI.
//
// tdpbssd multiplies signed bytes by signed bytes into exact int32 sums, so no correction is
// needed. The file's row-major weights are read in place as the A tiles (16 output channels x
// 64 bytes, rows k bytes apart); the rows of x are packed per call on the stack into the B
// tiles' layout (4 bytes of 16 rows per tile row), so each tile product gives the sums of
// 16 channels x 16 rows, transposed in registers and finished with Int8FinishX16. Products with
// fewer than kAmxMinRows rows, the last (end - begin) % 16 channels, and inputs wider than
// kAmxMaxK (the packed rows must fit the stack buffer) run the AVX-512 VNNI family instead.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AMX_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AMX_H_

#include <cstddef>

#include "kernels/int8_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define HEADWISE_INT8_AMX 1

namespace headwise::kernels {

inline constexpr size_t kAmxMinRows = 8;
inline constexpr size_t kAmxMaxK = 2048;

bool Int8AmxAvailable();  // CpuX86().amx_int8
void Int8GemmAmx(const Int8GemmArgs& a, size_t begin, size_t end);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AMX_H_
