// runtime/src/kernels/int8_packed.h: the packed layout of int8 weight matrices and the kernels
// that read it, one per x86 int8 family that packs (int8_gemm.h names the families):
//   avx512-vnni -> Int8GemmAvx512VnniPacked (int8_gemm_avx512vnni_packed.h): vpdpbusd on the
//                  unsigned bytes directly
//   avx2        -> Int8GemmAvx2Packed (int8_gemm_avx2_packed.h): the bytes back to signed
//                  (xor), then the avx2 family's |x| * sign(w, x) products
// Int8PackedKernelHere() says which one this process runs (the dispatched family's, where it
// has one); runtime/src/int8_packed_store.h packs a Model's matrices when it names one.
//
// Layout (PackInt8Vnni): blocks of 16 output channels, tiles of 4 blocks (64 channels); k in
// groups of 4 bytes, K4 = ceil(k / 4). A tile's groups follow each other, each as its 4 blocks'
// 64 bytes: channel o's 4 bytes of group g lie at Int8VnniPackedOffset(o, g, K4) =
// (o / 64) * K4 * 256 + g * 256 + ((o / 16) % 4) * 64 + (o % 16) * 4, byte b of them holds
// w[o, 4 g + b] + 128 as an unsigned byte (128, i.e. w = 0, past n or k; the last tile is
// padded to 64 channels). A tile is then one stream read front to back: 4 inputs of 16
// channels per 64 bytes (one AVX-512 vector; two AVX2 vectors of 8 channels each). Single rows
// of a packed matrix are read in place as k4 4-byte groups 256 bytes apart (the packed
// embedding lookup, kernels/embedding.h, and GatherInt8VnniPacked, the shortlist's gather of
// lm_head rows).
//
// Every packed kernel has Int8Gemm's contract: y is bit-identical to Int8GemmReference for
// every row count and every channel range (exact int32 sums, the reference's finish); a range
// that starts or ends inside a block computes the whole block and stores its part (masked);
// a.w is not read.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_PACKED_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_PACKED_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/int8_gemm.h"

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

// The 4 bytes of a row of x (k bytes) from input 4 g on, as the int32 a packed kernel
// broadcasts, zero past k: the packed weights there are w = 0, but the bytes past a row of x are
// the next row's, or past the buffer.
inline int32_t Int8PackedXGroup(const int8_t* row, size_t g, size_t k) {
  int32_t v = 0;
  std::memcpy(&v, row + 4 * g, k - 4 * g < 4 ? k - 4 * g : 4);
  return v;
}

// Output channels [begin, end) of every row from `packed` (PackInt8Vnni of the a.k-wide
// weights).
using Int8PackedGemmFn = void (*)(const Int8GemmArgs& a, const uint8_t* packed, size_t begin,
                                  size_t end);

struct Int8PackedKernel {
  const char* name = nullptr;       // e.g. "avx2-packed"; null where nothing packs
  Int8PackedGemmFn gemm = nullptr;  // null where nothing packs
};

// The packed kernel of the family Int8Gemm dispatches to in this process (Int8GemmKernelName(),
// the CPU's first choice or HEADWISE_INT8_KERNEL's), or {null, null} where that family has none
// (amx, whose tiles read the row-major rows; avx-vnni; the ARM families; portable).
const Int8PackedKernel& Int8PackedKernelHere();

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_INT8_PACKED_H_
