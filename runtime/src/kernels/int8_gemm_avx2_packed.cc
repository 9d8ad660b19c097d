// The AVX2 product on the packed layout (int8_gemm_avx2_packed.h).
#include "kernels/int8_gemm_avx2_packed.h"

#ifdef HEADWISE_INT8_AVX2
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int8_packed.h"

namespace headwise::kernels {
namespace {

constexpr size_t kVecChannels = 8;  // channels per 32-byte vector
constexpr size_t kVecsPerGroup = kVnniGroupBytes / 32;  // 8: a group of a tile

// acc[r][j] += the products of vector j of the group at wg (w + 128) with the 4 bytes xg[r].
template <int R, int NV>
__attribute__((target("avx2"), always_inline)) inline void Group(const uint8_t* wg,
                                                                 const int32_t* xg,
                                                                 __m256i (&acc)[R][NV]) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  if constexpr (R == 1) {
    const __m256i xb = _mm256_set1_epi32(xg[0]);
    const __m256i axb = _mm256_sign_epi8(xb, xb);
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const __m256i w = _mm256_xor_si256(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 32 * j)), flip);
      acc[0][j] = _mm256_add_epi32(
          acc[0][j], _mm256_madd_epi16(_mm256_maddubs_epi16(axb, _mm256_sign_epi8(w, xb)), ones));
    }
  } else {
    __m256i w[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      w[j] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 32 * j)),
                              flip);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256i xb = _mm256_set1_epi32(xg[r]);
      const __m256i axb = _mm256_sign_epi8(xb, xb);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        acc[r][j] = _mm256_add_epi32(
            acc[r][j],
            _mm256_madd_epi16(_mm256_maddubs_epi16(axb, _mm256_sign_epi8(w[j], xb)), ones));
      }
    }
  }
}

// Groups ahead whose lines the first pass over a tile prefetches.
constexpr size_t kPrefetchGroups = 8;

// Rows [r0, r0 + R) x the NV vectors from vector v of every group of `tile` (channels from o0
// on); stores the channels in [begin, end). With `fetch` (the first pass over a tile) it
// prefetches every line of the group kPrefetchGroups ahead. With several passes (each reads one
// or two of a group's four cache lines) the passes after it then read the tile from the cache:
// left to the hardware prefetchers, four strided passes over a 512-wide lm_head tile from memory
// made 4 rows 0.64-0.90x the row-major kernel's speed. With one pass (one row) it keeps the
// stream ahead of the reads: the 512-wide int8 decode step read its weights from memory at a
// median 0.87 of a plain streaming read against 0.70 without (six alternating rounds, one AMD
// EPYC core). Prefetching past the end is harmless (no fault).
template <int R, int NV>
__attribute__((target("avx2"))) void Pass(const Int8GemmArgs& a, const uint8_t* tile, size_t v,
                                          size_t k4, size_t r0, size_t o0, size_t begin,
                                          size_t end, bool fetch) {
  const size_t k = a.k, full = k / 4;
  const uint8_t* wv = tile + v * 32;
  const int8_t* x = a.xq + r0 * k;
  __m256i acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm256_setzero_si256();
  }
  int32_t xg[R];
  for (size_t g = 0; g < full; ++g) {
    if (fetch) {
      const char* ahead = reinterpret_cast<const char*>(tile + (g + kPrefetchGroups) * kVnniGroupBytes);
      _mm_prefetch(ahead, _MM_HINT_T0);
      _mm_prefetch(ahead + 64, _MM_HINT_T0);
      _mm_prefetch(ahead + 128, _MM_HINT_T0);
      _mm_prefetch(ahead + 192, _MM_HINT_T0);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) std::memcpy(&xg[r], x + r * k + 4 * g, 4);
    Group<R, NV>(wv + g * kVnniGroupBytes, xg, acc);
  }
  if (full < k4) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) xg[r] = Int8PackedXGroup(x + r * k, full, k);
    Group<R, NV>(wv + full * kVnniGroupBytes, xg, acc);
  }
  const __m256 lo = _mm256_set1_ps(a.out_min), hi = _mm256_set1_ps(a.out_max);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 8
  for (int j = 0; j < NV; ++j) {
    const size_t o = o0 + j * kVecChannels;
    if (o >= end) break;
    if (o + kVecChannels <= begin) continue;
    const size_t lo_c = begin > o ? begin - o : 0, hi_c = std::min(kVecChannels, end - o);
    const bool whole = lo_c == 0 && hi_c == kVecChannels;
    // Lanes [lo_c, hi_c): masked loads and stores never touch the others (no fault past the
    // arrays, no write into a neighbouring thread's channels).
    const __m256i m = _mm256_andnot_si256(
        _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lo_c)), lane),
        _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi_c)), lane));
    const __m256 w_scale = whole ? _mm256_loadu_ps(a.w_scale + o) : _mm256_maskload_ps(a.w_scale + o, m);
    const __m256 bias = whole ? _mm256_loadu_ps(a.bias + o) : _mm256_maskload_ps(a.bias + o, m);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      // Int8Finish lane by lane: s = x_scale * w_scale, acc * s, + bias, clamp (max then min:
      // a NaN becomes out_min as std::max(out_min, NaN) does).
      const __m256 s = _mm256_mul_ps(_mm256_set1_ps(a.x_scale[r0 + r]), w_scale);
      __m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][j]), s);
      __asm__("" : "+x"(p));  // no contraction into a fused multiply-add, whatever the flags
      const __m256 y = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(p, bias), lo), hi);
      float* dst = a.y + (r0 + r) * a.y_stride + o;
      if (whole) {
        _mm256_storeu_ps(dst, y);
      } else {
        _mm256_maskstore_ps(dst, m, y);
      }
    }
  }
}

// Every pass of R rows over the vectors [v_lo, v_hi) of a tile (v_lo rounded down to a
// multiple of NV, so that a pass never reads past its group).
template <int R, int NV>
__attribute__((target("avx2"))) void Passes(const Int8GemmArgs& a, const uint8_t* tile, size_t k4,
                                            size_t r0, size_t tile_o, size_t v_lo, size_t v_hi,
                                            size_t begin, size_t end) {
  const size_t first = v_lo / NV * NV;
  for (size_t v = first; v < v_hi; v += NV) {
    Pass<R, NV>(a, tile, v, k4, r0, tile_o + v * kVecChannels, begin, end, v == first);
  }
}

}  // namespace

bool Int8Avx2PackedAvailable() { return Int8Avx2Available(); }

__attribute__((target("avx2"))) void Int8GemmAvx2Packed(const Int8GemmArgs& a,
                                                        const uint8_t* packed, size_t begin,
                                                        size_t end) {
  if (begin >= end || a.rows == 0) return;
  const size_t k4 = (a.k + 3) / 4;
  for (size_t t = begin / kVnniTile; t * kVnniTile < end; ++t) {
    const uint8_t* tile = packed + t * k4 * kVnniGroupBytes;
    const size_t tile_o = t * kVnniTile;
    const size_t v_lo = (std::max(begin, tile_o) - tile_o) / kVecChannels;
    const size_t v_hi = (std::min(end, tile_o + kVnniTile) - tile_o + kVecChannels - 1) / kVecChannels;
    size_t r = 0;
    for (; r + 4 <= a.rows; r += 4) Passes<4, 2>(a, tile, k4, r, tile_o, v_lo, v_hi, begin, end);
    switch (a.rows - r) {
      case 3: Passes<3, 2>(a, tile, k4, r, tile_o, v_lo, v_hi, begin, end); break;
      case 2: Passes<2, 4>(a, tile, k4, r, tile_o, v_lo, v_hi, begin, end); break;
      case 1: Passes<1, kVecsPerGroup>(a, tile, k4, r, tile_o, v_lo, v_hi, begin, end); break;
      default: break;
    }
  }
}

}  // namespace headwise::kernels

#else

namespace headwise::kernels {
bool Int8Avx2PackedAvailable() { return false; }
}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_AVX2
