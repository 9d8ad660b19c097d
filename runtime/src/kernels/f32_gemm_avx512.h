// runtime/src/kernels/f32_gemm_avx512.h: the x86 AVX-512 fp32 gemm family (f32_gemm.h lists
// the families and their common contract). Compiled on x86 only; run only when
// F32GemmAvx512Available() (CpuX86(): AVX-512 F with zmm state, AVX2, FMA, F16C).
//
// The contract sums each output in one 8-lane accumulator, so a 16-lane register holds two of
// them: rows 2p and 2p + 1 of one output channel (lanes 0-7 and 8-15). The rows of a tile are
// copied in pairs into a stack buffer ([chunk][pair][16 floats]), each weight chunk is read in
// place and broadcast to both halves (vbroadcastf64x4 for F32; F16 widened with vcvtph2ps),
// and one vfmadd231ps does 8 lanes of two rows: P pairs x NR channels of accumulators (6 x 4
// = 24 of the 32 zmm registers for 12 rows; 2 x 8 and 1 x 8 for 4 and 2 rows, the last pair
// of an odd row count half empty). The lanes are reduced in the contract's tree across groups
// of 4 channels with in-lane shuffles, 16 sums at a time, then finished 16 at a time.
// Channels go in blocks of F32GemmBlockChannels that every row tile passes before the next
// block. Inputs longer than 512 (k) are cut into segments of 512 so a tile's pairs stay in L1;
// the accumulators are kept on the stack between segments (blocks of at most 24 channels
// then), which changes no float. One row at a time runs the AVX2 family (a single row fills
// half of each register). Stack: about 33 KB.
#ifndef HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX512_H_
#define HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX512_H_

#include <cstddef>

#include "kernels/f32_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define HEADWISE_F32_GEMM_AVX512 1

namespace headwise::kernels {

bool F32GemmAvx512Available();
void F32GemmAvx512(const F32GemmArgs& a, size_t begin, size_t end);

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX512_H_
