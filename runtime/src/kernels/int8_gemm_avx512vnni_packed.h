// runtime/src/kernels/int8_gemm_avx512vnni_packed.h: the int8 product of int8_gemm.h on the
// packed layout of int8_packed.h, for x86 with AVX-512 VNNI: what the int8 operators
// (fc/fc_int8.cc) run on the Model's packed copies where the avx512-vnni family is dispatched.
//
// Layout: int8_packed.h. A 64-byte load holds 4 inputs of 16 channels; vpdpbusd against the 4
// bytes of a row of x broadcast to every lane adds them into the 16 channels' sums directly, with
// no reduction across lanes at the end and no xor per load, which the row-major tiles of
// int8_gemm_avx512vnni.h need (128 * sum_k x[r, k] is subtracted as there). Tiles of 4 rows x
// 4 blocks (16 accumulators) read their tile front to back, one stream: with a block's groups
// contiguous instead (4 streams 64 bytes wide per tile, the layout before), a one-row product
// read a 38 MB decode step's weights from memory at 19-23 GB/s against 31-40 GB/s now, and from
// the last-level cache at 75-87 against 75-95 GB/s (a standalone loop over both layouts, one AMD
// EPYC core); the hardware prefetchers follow one stream where they fell short of four.
//
// Contract: int8_packed.h's (bit-identical to Int8GemmReference, finished by Int8FinishX16).
// Measured against the row-major family on one AMD EPYC core, weights in cache, with the block
// layout before: 1.3-1.8x at k = 256 for 1 to 32 rows, 1.06-1.14x at k = 1024
// (bench/results/2026-12-06-int8-vnni-packed-x86-2core.md); the tile layout and its loop:
// bench/results/2026-12-06-int8-tiled-layout-x86-2core.md.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX512VNNI_PACKED_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX512VNNI_PACKED_H_

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm.h"
#include "kernels/int8_gemm_avx512vnni.h"  // HEADWISE_INT8_AVX512VNNI on x86
#include "kernels/int8_packed.h"

namespace headwise::kernels {

// True where Int8GemmAvx512VnniPacked can run (CpuX86().avx512_vnni); false off x86.
bool Int8Avx512VnniPackedAvailable();

#ifdef HEADWISE_INT8_AVX512VNNI
// Output channels [begin, end) of every row from `packed` (PackInt8Vnni of the a.k-wide
// weights). Only where Int8Avx512VnniPackedAvailable().
void Int8GemmAvx512VnniPacked(const Int8GemmArgs& a, const uint8_t* packed, size_t begin,
                              size_t end);
#endif

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX512VNNI_PACKED_H_
