#include "kernels/int8_gemm_avx512vnni.h"

#ifdef HEADWISE_INT8_AVX512VNNI

#include <algorithm>

#include "kernels/cpu_x86.h"

namespace headwise::kernels {
namespace {

constexpr size_t kRowChunk = 256;  // rows whose corrections are held at a time (stack)
constexpr size_t kPrefetchBlocks = 2;  // blocks of 16 channels between a read and its prefetch

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
  const int8_t* w[16];   // the tile's N weight rows (repeats of the last one past `end`)
  size_t o, no;          // first output channel, how many are real (1..N)
  size_t prefetch;       // bytes past each weight row to prefetch (the next blocks); 0: none;
                         // the one-row tile leaves it to the hardware prefetcher
};

// R rows x N output channels, R * N = 16 accumulators: accumulator i is (row i / N, channel
// i % N), and after the reduction lane i of one vector holds its sum. 1 x 16 serves a single
// row (a greedy decode step), 2 x 8 and 4 x 4 several (beams, batches): per 64 bytes of k, N
// weight loads (with their xor) and R row loads feed 16 vpdpbusd.
template <int R, int N>
HEADWISE_TARGET_AVX512VNNI void Tile(const TileArgs& t) {
  static_assert(R * N == 16, "a tile has 16 accumulators");
  const Int8GemmArgs& a = *t.a;
  const size_t k = a.k;
  const int8_t* x = a.xq + t.r0 * k;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_setzero_si512();
  size_t i = 0;
  if constexpr (R == 1) {
    // One row (a greedy decode step, bound by reading the weights): each channel's k bytes in
    // turn, so the tile's 16 weight rows, which lie one after the other, are read in address
    // order as one stream (16 interleaved streams k bytes apart left DRAM reads at a third of a
    // plain streaming read on an AMD EPYC VM). The same sums in the same order per channel.
    const size_t full = k & ~size_t{63};
#pragma GCC unroll 16
    for (int j = 0; j < N; ++j) {
      for (size_t c = 0; c < full; c += 64) {
        // No software prefetch here: the hardware prefetcher follows one stream (prefetching
        // 1-2 blocks ahead as the several-row tiles do was 10% slower).
        const __m512i w = _mm512_xor_si512(_mm512_loadu_si512(t.w[j] + c), flip);
        acc[j] = _mm512_dpbusd_epi32(acc[j], w, _mm512_loadu_si512(x + c));
      }
    }
    i = full;
  } else {
    for (; i + 64 <= k; i += 64) {
      __m512i xv[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) xv[r] = _mm512_loadu_si512(x + r * k + i);
#pragma GCC unroll 16
      for (int j = 0; j < N; ++j) {
        // Rows are short (k bytes), too short for the hardware prefetcher to reach the next
        // ones in time from DRAM on its own.
        if (t.prefetch != 0) _mm_prefetch(reinterpret_cast<const char*>(t.w[j] + t.prefetch + i), _MM_HINT_T0);
        const __m512i w = _mm512_xor_si512(_mm512_loadu_si512(t.w[j] + i), flip);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) acc[r * N + j] = _mm512_dpbusd_epi32(acc[r * N + j], w, xv[r]);
      }
    }
  }
  if (i < k) {
    // Zero bytes of x past k meet w + 128 = 128: products 0.
    const __mmask64 m = ~0ull >> (64 - (k - i));
    __m512i xv[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) xv[r] = _mm512_maskz_loadu_epi8(m, x + r * k + i);
#pragma GCC unroll 16
    for (int j = 0; j < N; ++j) {
      const __m512i w = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, t.w[j] + i), flip);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r * N + j] = _mm512_dpbusd_epi32(acc[r * N + j], w, xv[r]);
    }
  }
  const __m512i sums = SumLanes(Quad(acc[0], acc[1], acc[2], acc[3]), Quad(acc[4], acc[5], acc[6], acc[7]),
                                Quad(acc[8], acc[9], acc[10], acc[11]),
                                Quad(acc[12], acc[13], acc[14], acc[15]));
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i row = _mm512_srli_epi32(lane, N == 16 ? 4 : N == 8 ? 3 : 2);  // i / N
  const __m512i channel = _mm512_and_si512(lane, _mm512_set1_epi32(N - 1));  // i % N
  const __mmask16 rows_mask = static_cast<__mmask16>((1u << R) - 1);
  const __mmask16 out_mask = static_cast<__mmask16>((1u << t.no) - 1);
  const __m512i corr = _mm512_permutexvar_epi32(row, _mm512_maskz_loadu_epi32(rows_mask, t.corr));
  const __m512 x_scale = _mm512_permutexvar_ps(row, _mm512_maskz_loadu_ps(rows_mask, a.x_scale + t.r0));
  const __m512 w_scale = _mm512_permutexvar_ps(channel, _mm512_maskz_loadu_ps(out_mask, a.w_scale + t.o));
  const __m512 bias = _mm512_permutexvar_ps(channel, _mm512_maskz_loadu_ps(out_mask, a.bias + t.o));
  const __m512 y = Int8FinishX16(_mm512_sub_epi32(sums, corr), _mm512_mul_ps(x_scale, w_scale), bias,
                                 _mm512_set1_ps(a.out_min), _mm512_set1_ps(a.out_max));
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const __m512 yr = r == 0 ? y : _mm512_permutexvar_ps(_mm512_add_epi32(lane, _mm512_set1_epi32(r * N)), y);
    _mm512_mask_storeu_ps(a.y + (t.r0 + r) * a.y_stride + t.o, out_mask, yr);
  }
}

// Sets the tile's N weight rows from channel t->o on (the last real one repeated past `end`).
template <int N>
void SetChannels(const Int8GemmArgs& a, size_t o, size_t end, TileArgs* t) {
  t->o = o;
  t->no = std::min<size_t>(N, end - o);
  for (size_t j = 0; j < N; ++j) t->w[j] = a.w + (o + std::min(j, t->no - 1)) * a.k;
}

}  // namespace

bool Int8Avx512VnniAvailable() { return CpuX86().avx512_vnni; }

HEADWISE_TARGET_AVX512VNNI void Int8GemmAvx512Vnni(const Int8GemmArgs& a, size_t begin, size_t end) {
  if (begin >= end || a.rows == 0) return;
  int32_t corr[kRowChunk];
  TileArgs t;
  t.a = &a;
  // Blocks of 16 output channels; every row passes a block while its 16 weight rows (16 k
  // bytes) stay in L1, the first tile of each block prefetching the weights kPrefetchBlocks
  // blocks ahead.
  const size_t prefetch = kPrefetchBlocks * 16 * a.k;
  for (size_t r0 = 0; r0 < a.rows; r0 += kRowChunk) {
    const size_t n = std::min(kRowChunk, a.rows - r0);
    Int8VnniCorrections(a.xq + r0 * a.k, n, a.k, corr);
    for (size_t o = begin; o < end; o += 16) {
      t.prefetch = o + 16 < end ? prefetch : 0;
      size_t r = 0;
      for (; r + 4 <= n; r += 4) {
        t.r0 = r0 + r;
        t.corr = corr + r;
        for (size_t s = o; s < end && s < o + 16; s += 4) {
          SetChannels<4>(a, s, end, &t);
          Tile<4, 4>(t);
        }
        t.prefetch = 0;
      }
      if (r + 2 <= n) {
        t.r0 = r0 + r;
        t.corr = corr + r;
        for (size_t s = o; s < end && s < o + 16; s += 8) {
          SetChannels<8>(a, s, end, &t);
          Tile<2, 8>(t);
        }
        t.prefetch = 0;
        r += 2;
      }
      if (r < n) {
        t.r0 = r0 + r;
        t.corr = corr + r;
        SetChannels<16>(a, o, end, &t);
        Tile<1, 16>(t);
      }
    }
  }
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_AVX512VNNI
