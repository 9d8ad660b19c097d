#include "kernels/int8_gemm_avx512vnni_packed.h"

#include <algorithm>
#include <cstring>

#include "kernels/int8_gemm_avx512vnni.h"
#include "kernels/int8_packed.h"

namespace headwise::kernels {

#ifdef HEADWISE_INT8_AVX512VNNI

namespace {

constexpr size_t kRowChunk = 256;  // rows whose corrections are held at a time (stack)
constexpr int kBlocksPerTile = 4;

// Group g of a tile: its 4 blocks' 64 bytes (block j at wb[j] + g * kVnniGroupBytes) against
// the 4 bytes xg[r] of each row, broadcast, into acc.
template <int R>
HEADWISE_TARGET_AVX512VNNI __attribute__((always_inline)) inline void Group(
    const uint8_t* const* wb, size_t g, const int32_t* xg, __m512i (&acc)[R][kBlocksPerTile]) {
  __m512i wv[kBlocksPerTile];
#pragma GCC unroll 4
  for (int j = 0; j < kBlocksPerTile; ++j) {
    wv[j] = _mm512_loadu_si512(wb[j] + g * kVnniGroupBytes);
    // Held in a register: GCC otherwise loads each block again for every row (8 loads per 8
    // vpdpbusd at 2 rows, 12 per 12 at 3), which made two rows 10-25% slower from the L3.
    asm("" : "+v"(wv[j]));
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const __m512i bx = _mm512_set1_epi32(xg[r]);
#pragma GCC unroll 4
    for (int j = 0; j < kBlocksPerTile; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], wv[j], bx);
  }
}

// R rows from r0 x the `real` blocks from blk0, all in one tile of the layout (the others of
// the 4 computed repeat the last real one and are not stored); only channels in [begin, end)
// are stored.
template <int R>
HEADWISE_TARGET_AVX512VNNI void Tile(const Int8GemmArgs& a, const uint8_t* packed, size_t k4,
                                     size_t r0, const int32_t* corr, size_t blk0, size_t real,
                                     size_t begin, size_t end) {
  constexpr int NB = kBlocksPerTile;
  const size_t k = a.k, full = k / 4;
  // Block blk0 + j's group g: 64 bytes at wb[j] + g * kVnniGroupBytes.
  const uint8_t* wb[NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    wb[j] = packed + Int8VnniPackedOffset((blk0 + std::min<size_t>(j, real - 1)) * kVnniBlock, 0, k4);
  }
  const int8_t* x = a.xq + r0 * k;
  __m512i acc[R][NB];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_setzero_si512();
  }
  // The whole groups and the partial last one are separate loops: with the partial group's
  // copy inside the main loop GCC kept the weights and two accumulators in extra registers and
  // broadcast one row through a general register, 6 more instructions per 16 vpdpbusd.
  int32_t xg[R];
  for (size_t g = 0; g < full; ++g) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) std::memcpy(&xg[r], x + r * k + 4 * g, 4);
    Group<R>(wb, g, xg, acc);
  }
  if (full < k4) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) xg[r] = Int8PackedXGroup(x + r * k, full, k);
    Group<R>(wb, full, xg, acc);
  }
  const __m512 lo = _mm512_set1_ps(a.out_min), hi = _mm512_set1_ps(a.out_max);
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    if (static_cast<size_t>(j) >= real) break;
    const size_t o = (blk0 + j) * kVnniBlock;
    const size_t hi_c = std::min(kVnniBlock, end - o), lo_c = begin > o ? begin - o : 0;
    const __mmask16 m = static_cast<__mmask16>(((1u << hi_c) - 1) & ~((1u << lo_c) - 1));
    const __m512 w_scale = _mm512_maskz_loadu_ps(m, a.w_scale + o);
    const __m512 bias = _mm512_maskz_loadu_ps(m, a.bias + o);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 y = Int8FinishX16(_mm512_sub_epi32(acc[r][j], _mm512_set1_epi32(corr[r])),
                                     _mm512_mul_ps(_mm512_set1_ps(a.x_scale[r0 + r]), w_scale),
                                     bias, lo, hi);
      _mm512_mask_storeu_ps(a.y + (r0 + r) * a.y_stride + o, m, y);
    }
  }
}

}  // namespace

bool Int8Avx512VnniPackedAvailable() { return Int8Avx512VnniAvailable(); }

HEADWISE_TARGET_AVX512VNNI void Int8GemmAvx512VnniPacked(const Int8GemmArgs& a,
                                                         const uint8_t* packed, size_t begin,
                                                         size_t end) {
  if (begin >= end || a.rows == 0) return;
  const size_t k4 = (a.k + 3) / 4;
  const size_t b0 = begin / kVnniBlock, b1 = (end + kVnniBlock - 1) / kVnniBlock;
  int32_t corr[kRowChunk];
  for (size_t r0 = 0; r0 < a.rows; r0 += kRowChunk) {
    const size_t n = std::min(kRowChunk, a.rows - r0);
    Int8VnniCorrections(a.xq + r0 * a.k, n, a.k, corr);
    for (size_t blk = b0; blk < b1;) {
      // The blocks of [blk, b1) in blk's tile of the layout.
      const size_t real = std::min<size_t>(kBlocksPerTile - blk % kBlocksPerTile, b1 - blk);
      size_t r = 0;
      for (; r + 4 <= n; r += 4) Tile<4>(a, packed, k4, r0 + r, corr + r, blk, real, begin, end);
      switch (n - r) {
        case 3: Tile<3>(a, packed, k4, r0 + r, corr + r, blk, real, begin, end); break;
        case 2: Tile<2>(a, packed, k4, r0 + r, corr + r, blk, real, begin, end); break;
        case 1: Tile<1>(a, packed, k4, r0 + r, corr + r, blk, real, begin, end); break;
        default: break;
      }
      blk += real;
    }
  }
}

#else

bool Int8Avx512VnniPackedAvailable() { return false; }

#endif

}  // namespace headwise::kernels
