#include "kernels/int8_gemm_avx512vnni.h"

#ifdef HEADWISE_INT8_AVX512VNNI

#include <algorithm>

#include "kernels/cpu_x86.h"

namespace headwise::kernels {
namespace {

constexpr size_t kRowChunk = 64;  // rows whose corrections are held at a time (stack)

// 128 * sum_k x[r, k] for n rows: what reading w as w + 128 adds to each sum.
HEADWISE_TARGET_AVX512VNNI void Corrections(const int8_t* x, size_t n, size_t k, int32_t* c) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (size_t r = 0; r < n; ++r) {
    const int8_t* row = x + r * k;
    __m512i acc = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= k; i += 64) acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512(row + i));
    if (i < k) {
      acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(~0ull >> (64 - (k - i)), row + i));
    }
    c[r] = 128 * _mm512_reduce_add_epi32(acc);  // |sum| <= 127 k < 2^24: no overflow
  }
}

// Sums of the pairs (a, b): lane 4l + {0, 1, 2, 3} = {a0 + a2, b0 + b2, a1 + a3, b1 + b3} of
// 128-bit lane l.
HEADWISE_TARGET_AVX512VNNI inline __m512i Pair(__m512i a, __m512i b) {
  return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
}
// 128-bit lane l of the result = the four sums of a, b, c, d over their 128-bit lane l.
HEADWISE_TARGET_AVX512VNNI inline __m512i Quad(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i ab = Pair(a, b), cd = Pair(c, d);
  return _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
}
// 128-bit lane g of the result = the sum of the four 128-bit lanes of t_g.
HEADWISE_TARGET_AVX512VNNI inline __m512i SumLanes(__m512i t0, __m512i t1, __m512i t2, __m512i t3) {
  const __m512i u0 = _mm512_add_epi32(_mm512_shuffle_i32x4(t0, t1, 0x44), _mm512_shuffle_i32x4(t0, t1, 0xee));
  const __m512i u1 = _mm512_add_epi32(_mm512_shuffle_i32x4(t2, t3, 0x44), _mm512_shuffle_i32x4(t2, t3, 0xee));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(u0, u1, 0x88), _mm512_shuffle_i32x4(u0, u1, 0xdd));
}

struct TileArgs {
  const Int8GemmArgs* a;
  size_t r0;             // first row of the tile
  const int32_t* corr;   // corrections of the tile's rows
  const int8_t* w[4];    // the 4 weight rows (repeats of the last one past `end`)
  size_t o, no;          // first output channel, how many are real (1..4)
  bool prefetch;         // the weight rows of the next tile
};

// R rows (1..4) x 4 output channels. Lane 4r + j of the reduced vector holds (row r, channel j).
template <int R>
HEADWISE_TARGET_AVX512VNNI void Tile(const TileArgs& t) {
  const Int8GemmArgs& a = *t.a;
  const size_t k = a.k;
  const int8_t* x = a.xq + t.r0 * k;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  // Rows past R stay zero (a remainder tile reduces them with the rest).
  __m512i acc[4][4];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_setzero_si512();
  }
  size_t i = 0;
  for (; i + 64 <= k; i += 64) {
    __m512i w[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      // The next tile's rows follow these in memory (4 * k bytes on): rows are short, too
      // short for the hardware prefetcher to reach them in time from DRAM on its own.
      if (t.prefetch) _mm_prefetch(reinterpret_cast<const char*>(t.w[j] + 4 * k + i), _MM_HINT_T0);
      w[j] = _mm512_xor_si512(_mm512_loadu_si512(t.w[j] + i), flip);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_loadu_si512(x + r * k + i);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], w[j], xv);
    }
  }
  if (i < k) {
    // Zero bytes of x past k meet w + 128 = 128: products 0.
    const __mmask64 m = ~0ull >> (64 - (k - i));
    __m512i w[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) w[j] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, t.w[j] + i), flip);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_maskz_loadu_epi8(m, x + r * k + i);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], w[j], xv);
    }
  }
  __m512i q[4];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) q[r] = Quad(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
  const __mmask16 rows_mask = static_cast<__mmask16>((1u << R) - 1);
  const __mmask16 out_mask = static_cast<__mmask16>((1u << t.no) - 1);
  const __m512i by_row = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  const __m512i corr = _mm512_permutexvar_epi32(by_row, _mm512_maskz_loadu_epi32(rows_mask, t.corr));
  const __m512i sums = _mm512_sub_epi32(SumLanes(q[0], q[1], q[2], q[3]), corr);
  const __m512 x_scale = _mm512_permutexvar_ps(by_row, _mm512_maskz_loadu_ps(rows_mask, a.x_scale + t.r0));
  const __m512 w_scale = _mm512_broadcast_f32x4(_mm_maskz_loadu_ps(out_mask, a.w_scale + t.o));
  const __m512 bias = _mm512_broadcast_f32x4(_mm_maskz_loadu_ps(out_mask, a.bias + t.o));
  const __m512 y = Int8FinishX16(sums, _mm512_mul_ps(x_scale, w_scale), bias,
                                 _mm512_set1_ps(a.out_min), _mm512_set1_ps(a.out_max));
  alignas(64) float out[16];
  _mm512_store_ps(out, y);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    _mm_mask_storeu_ps(a.y + (t.r0 + r) * a.y_stride + t.o, out_mask, _mm_load_ps(out + 4 * r));
  }
}

}  // namespace

bool Int8Avx512VnniAvailable() { return CpuX86().avx512_vnni; }

HEADWISE_TARGET_AVX512VNNI void Int8GemmAvx512Vnni(const Int8GemmArgs& a, size_t begin, size_t end) {
  if (begin >= end || a.rows == 0) return;
  int32_t corr[kRowChunk];
  TileArgs t;
  t.a = &a;
  for (size_t r0 = 0; r0 < a.rows; r0 += kRowChunk) {
    const size_t n = std::min(kRowChunk, a.rows - r0);
    Corrections(a.xq + r0 * a.k, n, a.k, corr);
    for (size_t o = begin; o < end; o += 4) {
      t.o = o;
      t.no = std::min<size_t>(4, end - o);
      for (size_t j = 0; j < 4; ++j) t.w[j] = a.w + (o + std::min(j, t.no - 1)) * a.k;
      size_t r = 0;
      for (; r + 4 <= n; r += 4) {
        t.r0 = r0 + r;
        t.corr = corr + r;
        t.prefetch = r == 0 && t.no == 4;
        Tile<4>(t);
      }
      t.r0 = r0 + r;
      t.corr = corr + r;
      t.prefetch = r == 0 && t.no == 4;
      switch (n - r) {
        case 1: Tile<1>(t); break;
        case 2: Tile<2>(t); break;
        case 3: Tile<3>(t); break;
        default: break;
      }
    }
  }
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_AVX512VNNI
