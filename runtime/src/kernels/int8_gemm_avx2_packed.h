// runtime/src/kernels/int8_gemm_avx2_packed.h: the int8 product of int8_gemm.h on the packed
// layout of int8_packed.h, for x86 with AVX2 and no VNNI: what the int8 operators
// (fc/fc_int8.cc) run on the Model's packed copies where the avx2 family is dispatched.
//
// A 32-byte load holds 4 inputs of 8 channels (half of one of the layout's 64-byte blocks), as
// w + 128; an xor makes them w again, and the avx2 family's products (|x| * sign(w, x), u8 x s8
// pairs to int16, pairs to int32: no saturation since 127 * 127 * 2 < 2^15) against the 4 bytes
// of a row of x broadcast to every lane add into the 8 channels' sums directly: no reduction
// across lanes at the end, and the finish is vectorized 8 channels at a time. The tile of 64
// channels is read front to back, one stream, where the row-major family reads 4 rows of w at
// once (4 streams). Passes of R rows x NV vectors with R * NV = 8 accumulators (R = 1: NV = 8,
// the whole group; R = 2: 4; R = 3 and 4: 2, the weights held in registers across the rows);
// the first pass over a tile prefetches whole groups ahead of it.
//
// Contract: int8_packed.h's (bit-identical to Int8GemmReference: exact int32 sums, then the
// reference's multiply, add and clamp lane by lane; AVX2 has no FMA to contract them into).
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX2_PACKED_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX2_PACKED_H_

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm.h"
#include "kernels/int8_gemm_avx2.h"  // HEADWISE_INT8_AVX2 on x86

namespace headwise::kernels {

// True where Int8GemmAvx2Packed can run (AVX2); false off x86.
bool Int8Avx2PackedAvailable();

#ifdef HEADWISE_INT8_AVX2
// Output channels [begin, end) of every row from `packed` (PackInt8Vnni of the a.k-wide
// weights). Only where Int8Avx2PackedAvailable().
void Int8GemmAvx2Packed(const Int8GemmArgs& a, const uint8_t* packed, size_t begin, size_t end);
#endif

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX2_PACKED_H_
