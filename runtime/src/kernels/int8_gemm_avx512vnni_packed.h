// runtime/src/kernels/int8_gemm_avx512vnni_packed.h: the int8 product of int8_gemm.h on weights
// packed for vpdpbusd, for x86 with AVX-512 VNNI. The int8 operators (fc/fc_int8.cc) run it on
// the Model's packed copies where int8_packed_store.h says this process packs (the avx512-vnni
// family dispatched and the model mapped from a file); single rows of a packed matrix are read
// in place as k4 4-byte groups 256 bytes apart (the packed embedding lookup, kernels/embedding.h,
// and GatherInt8VnniPacked, the shortlist's gather of lm_head rows).
//
// Layout (PackInt8Vnni): blocks of 16 output channels, tiles of 4 blocks (64 channels); k in
// groups of 4 bytes, K4 = ceil(k / 4). A tile's groups follow each other, each as its 4 blocks'
// 64 bytes: channel o's 4 bytes of group g lie at Int8VnniPackedOffset(o, g, K4) =
// (o / 64) * K4 * 256 + g * 256 + ((o / 16) % 4) * 64 + (o % 16) * 4, byte b of them holds
// w[o, 4 g + b] + 128 as an unsigned byte (128, i.e. w = 0, past n or k; the last tile is
// padded to 64 channels). One 64-byte load then holds 4 inputs of 16 channels, vpdpbusd against
// the 4 bytes of a row of x broadcast to every lane adds them into the 16 channels' sums
// directly: no reduction across lanes at the end and no xor per load, which the row-major tiles
// of int8_gemm_avx512vnni.h need (128 * sum_k x[r, k] is subtracted as there). Tiles of 4 rows x
// 4 blocks (16 accumulators) read their tile front to back, one stream: with a block's groups
// contiguous instead (4 streams 64 bytes wide per tile, the layout before), a one-row product
// read a 38 MB decode step's weights from memory at 19-23 GB/s against 31-40 GB/s now, and from
// the last-level cache at 75-87 against 75-95 GB/s (a standalone loop over both layouts, one AMD
// EPYC core); the hardware prefetchers follow one stream where they fell short of four.
//
// Same contract as Int8Gemm: y is bit-identical to Int8GemmReference for every row count and
// every channel range (exact int32 sums, Int8FinishX16); a range that starts or ends inside a
// block computes the whole block and stores its part (masked). a.w is not read.
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

namespace headwise::kernels {

inline constexpr size_t kVnniBlock = 16;  // output channels per block

inline constexpr size_t kVnniTile = 64;   // output channels per tile (4 blocks)

// Bytes of the packed layout of an [n, k] matrix: ceil(n / 64) * ceil(k / 4) * 256.
size_t Int8VnniPackedBytes(size_t n, size_t k);

// Bytes of one group of a tile (4 inputs of its 64 channels): consecutive groups of a channel
// lie this far apart.
inline constexpr size_t kVnniGroupBytes = kVnniTile * 4;

// Where channel o's 4 bytes of group g lie in a packed matrix of k4 = ceil(k / 4) groups.
inline size_t Int8VnniPackedOffset(size_t o, size_t g, size_t k4) {
  return o / kVnniTile * k4 * kVnniGroupBytes + g * kVnniGroupBytes + o % kVnniTile * 4;
}

// Packs row-major w [n, k] into out (Int8VnniPackedBytes(n, k) bytes). Portable.
void PackInt8Vnni(const int8_t* w, size_t n, size_t k, uint8_t* out);

// The rows `ids[0..count)` of a packed matrix with k inputs, as the packed layout of the
// [count, k] matrix of those rows in that order (what PackInt8Vnni of the gathered row-major
// rows gives, byte for byte; channels past count hold w = 0): out has
// Int8VnniPackedBytes(count, k) bytes. Each row is k4 4-byte copies. Portable. (The shortlist
// gathers the union's lm_head rows with it.)
void GatherInt8VnniPacked(const uint8_t* packed, size_t k, const int32_t* ids, size_t count,
                          uint8_t* out);

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
