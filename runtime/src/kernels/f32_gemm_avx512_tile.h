// runtime/src/kernels/f32_gemm_avx512_tile.h: the tile of the AVX-512 fp32 gemm family
// (f32_gemm_avx512.h), private to f32_gemm_avx512.cc: rows in pairs x NR output channels over
// one segment of k, and its reduction in the summation order of f32_gemm.h.
//
// A 16-lane accumulator holds the 8 contract lanes of two rows of one channel: lanes 0-7 row
// 2p, lanes 8-15 row 2p + 1. The pairs come packed ([chunk][pair][16 floats], 64-byte aligned),
// the weights are read in place, each chunk of 8 broadcast to both halves.
#ifndef HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX512_TILE_H_
#define HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX512_TILE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/f32_gemm_kernel.h"
#include "kernels/x86_intrinsics.h"

#define HEADWISE_F32_UNROLL _Pragma("GCC unroll 32")
#define HEADWISE_TARGET_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
#define HEADWISE_INLINE_AVX512 \
  __attribute__((target("avx512f,avx2,fma,f16c"), always_inline)) inline

namespace headwise::kernels::f32_avx512 {

// Chunks [from, to) of one row of x (src, 8 floats per chunk) into one half of its pair
// (dst, `stride` floats per chunk); a null src stores zeros (the empty half of an odd pair).
HEADWISE_INLINE_AVX512 void CopyRow(const float* src, float* dst, size_t stride, size_t from,
                                    size_t to) {
  for (size_t m = from; m < to; ++m) {
    _mm256_store_ps(dst + m * stride,
                    src != nullptr ? _mm256_loadu_ps(src + m * 8) : _mm256_setzero_ps());
  }
}

// One row of the next pack job, copied by a tile while it computes (loads and stores on ports
// the multiply-adds leave idle, so the copy is nearly free and the next tile's pairs are ready).
struct RowCopy {
  const float* src = nullptr;  // null: zeros
  float* dst = nullptr;        // null: nothing to copy
  size_t stride = 0, chunks = 0;
};

// The weights of the tile that runs next, when they come from memory (it is in its block's
// first row tile): one 64-byte line of each of its rows prefetched per line of this tile's.
struct Ahead {
  const void* w = nullptr;  // the segment's first weight of row 0; null: no prefetch
  size_t row[8] = {};       // the tile's rows (the last real channel repeated past the range)
};

// Weight chunk [at, at + 8) of one row in both 256-bit halves (F16 widened exactly).
template <bool F16>
HEADWISE_INLINE_AVX512 __m512 LoadW(const void* w, size_t at) {
  if constexpr (F16) {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(w) + at));
    return _mm512_cvtph_ps(_mm256_broadcastsi128_si256(h));
  } else {
    const double* p = reinterpret_cast<const double*>(static_cast<const float*>(w) + at);
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_loadu_pd(p)));
  }
}

// In each 128-bit lane: [a0 + a1, a2 + a3, b0 + b1, b2 + b3] (what hadd does on 256 bits).
HEADWISE_INLINE_AVX512 __m512 Hadd(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, 0x88), _mm512_shuffle_ps(a, b, 0xdd));
}

// Four accumulators (channels j..j+3 of one pair of rows): 128-bit lane 0 holds
// (l0 + l1) + (l2 + l3) of row A for the four channels, lane 1 (l4 + l5) + (l6 + l7) of row A,
// lanes 2 and 3 the same for row B.
HEADWISE_INLINE_AVX512 __m512 Quad(__m512 a, __m512 b, __m512 c, __m512 d) {
  return Hadd(Hadd(a, b), Hadd(c, d));
}

// The tile's sums reduced 16 at a time and written to y: quads q0 and q1 give one vector whose
// 128-bit lanes are (row A, row B of q0, row A, row B of q1) x the quad's 4 channels, each the
// two halves of the lane sum added; then bias and clamp as F32Finish (or, with a k % 8 tail or
// fewer than NR channels, the scalar tail and finish).
template <int P, int NR>
HEADWISE_INLINE_AVX512 void Finish(const F32GemmArgs& a, size_t r0, size_t rows, size_t o,
                                   size_t no, __m512 (&acc)[P][NR]) {
  constexpr int G = NR / 4;  // groups of 4 channels
  constexpr int U = P * G;   // quads: u[p * G + g]
  __m512 u[U];
  HEADWISE_F32_UNROLL
  for (int p = 0; p < P; ++p) {
    HEADWISE_F32_UNROLL
    for (int g = 0; g < G; ++g) {
      u[p * G + g] = Quad(acc[p][4 * g], acc[p][4 * g + 1], acc[p][4 * g + 2], acc[p][4 * g + 3]);
    }
  }
  const size_t k8 = a.k / 8 * 8;
  const bool vector_finish = k8 == a.k && no == static_cast<size_t>(NR);
  __m512 bias[G];
  HEADWISE_F32_UNROLL
  for (int g = 0; g < G; ++g) {
    bias[g] = vector_finish ? _mm512_broadcast_f32x4(_mm_loadu_ps(a.bias + o + 4 * g))
                            : _mm512_setzero_ps();
  }
  const __m512 lo = _mm512_set1_ps(a.out_min), hi = _mm512_set1_ps(a.out_max);
  alignas(64) float s[16];
  HEADWISE_F32_UNROLL
  for (int v = 0; v < (U + 1) / 2; ++v) {
    const int q0 = 2 * v, q1 = std::min(2 * v + 1, U - 1);
    __m512 t = _mm512_add_ps(_mm512_shuffle_f32x4(u[q0], u[q1], 0x88),
                             _mm512_shuffle_f32x4(u[q0], u[q1], 0xdd));
    if (vector_finish) {
      const __m512 b = _mm512_shuffle_f32x4(bias[q0 % G], bias[q1 % G], 0x00);
      t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(t, b), lo), hi);
    }
    _mm512_store_ps(s, t);
    HEADWISE_F32_UNROLL
    for (int lane = 0; lane < 4; ++lane) {
      const int q = lane < 2 ? q0 : 2 * v + 1;
      if (q >= U) continue;  // the repeat of an odd last quad
      const size_t row = 2 * static_cast<size_t>(q / G) + static_cast<size_t>(lane % 2);
      if (row >= rows) continue;  // the empty half of the last pair
      const size_t first = o + 4 * static_cast<size_t>(q % G);
      float* y = a.y + (r0 + row) * a.y_stride + first;
      const float* sums = s + 4 * lane;
      if (vector_finish) {
        _mm_storeu_ps(y, _mm_load_ps(sums));
        continue;
      }
      const float* x = a.x + (r0 + row) * a.x_stride;
      for (size_t c = 0; c < 4 && first + c < o + no; ++c) {
        y[c] = F32Finish(a, first + c, F32TailSum(a, x, first + c, k8, sums[c]));
      }
    }
  }
}

// Chunk m of the tile: NR weight vectors, P pair vectors, P x NR fused multiply-adds.
template <int P, int NR, bool F16, typename W>
HEADWISE_INLINE_AVX512 void Step(__m512 (&acc)[P][NR], const W* const (&w)[NR], const float* xp,
                                 size_t m) {
  __m512 wv[NR];
  HEADWISE_F32_UNROLL
  for (int j = 0; j < NR; ++j) wv[j] = LoadW<F16>(w[j], m * 8);
  const float* xm = xp + m * P * 16;
  HEADWISE_F32_UNROLL
  for (int p = 0; p < P; ++p) {
    const __m512 xv = _mm512_load_ps(xm + p * 16);
    HEADWISE_F32_UNROLL
    for (int j = 0; j < NR; ++j) acc[p][j] = _mm512_fmadd_ps(xv, wv[j], acc[p][j]);
  }
}

// Rows [r0, r0 + rows) (rows <= 2P) x channels [o, o + no) (1 <= no <= NR, NR 4 or 8), chunks
// [c0, c0 + cn) from the packed pairs xp. The accumulators start at zero for the first segment
// and from `partial` (P x NR x 16 floats, 64-byte aligned) otherwise, and go back to `partial`
// unless this is the last segment, which writes y. Meanwhile it prefetches `ahead` and copies
// `copy`.
template <int P, int NR, bool F16>
HEADWISE_TARGET_AVX512 void Tile(const F32GemmArgs& a, size_t r0, size_t rows, size_t o,
                                 size_t no, const float* xp, size_t c0, size_t cn,
                                 float* partial, bool first, bool last, const Ahead& ahead,
                                 const RowCopy& copy) {
  using W = std::conditional_t<F16, uint16_t, float>;
  const W* w[NR];
  HEADWISE_F32_UNROLL
  for (int j = 0; j < NR; ++j) {
    // Channels past `no` repeat the last real one (read, never stored).
    const size_t oj = o + std::min(static_cast<size_t>(j), no - 1);
    w[j] = static_cast<const W*>(a.w) + oj * a.k + c0 * 8;
  }
  __m512 acc[P][NR];
  HEADWISE_F32_UNROLL
  for (int p = 0; p < P; ++p) {
    HEADWISE_F32_UNROLL
    for (int j = 0; j < NR; ++j) {
      acc[p][j] = first ? _mm512_setzero_ps() : _mm512_load_ps(partial + (p * NR + j) * 16);
    }
  }
  // Three loops rather than one with tests inside: the tests cost 5-15% of the tile.
  const size_t copied = copy.dst != nullptr ? std::min(cn, copy.chunks) : 0;
  if (ahead.w != nullptr) {
    constexpr size_t kLine = F16 ? 4 : 2;  // chunks per 64-byte line of weights
    const char* next = static_cast<const char*>(ahead.w);
    for (size_t m = 0; m < cn; ++m) {
      if (m % kLine == 0) {
        HEADWISE_F32_UNROLL
        for (int j = 0; j < NR; ++j) {
          _mm_prefetch(next + (ahead.row[j] * a.k + m * 8) * sizeof(W), _MM_HINT_T0);
        }
      }
      Step<P, NR, F16>(acc, w, xp, m);
      if (m < copied) CopyRow(copy.src, copy.dst, copy.stride, m, m + 1);
    }
  } else if (copied > 0) {
    size_t m = 0;
    for (; m < copied; ++m) {
      Step<P, NR, F16>(acc, w, xp, m);
      CopyRow(copy.src, copy.dst, copy.stride, m, m + 1);
    }
    for (; m < cn; ++m) Step<P, NR, F16>(acc, w, xp, m);
  } else {
    for (size_t m = 0; m < cn; ++m) Step<P, NR, F16>(acc, w, xp, m);
  }
  if (copy.dst != nullptr) CopyRow(copy.src, copy.dst, copy.stride, copied, copy.chunks);
  if (!last) {
    HEADWISE_F32_UNROLL
    for (int p = 0; p < P; ++p) {
      HEADWISE_F32_UNROLL
      for (int j = 0; j < NR; ++j) _mm512_store_ps(partial + (p * NR + j) * 16, acc[p][j]);
    }
    return;
  }
  Finish<P, NR>(a, r0, rows, o, no, acc);
}

}  // namespace headwise::kernels::f32_avx512

#endif  // HEADWISE_RUNTIME_KERNELS_F32_GEMM_AVX512_TILE_H_
