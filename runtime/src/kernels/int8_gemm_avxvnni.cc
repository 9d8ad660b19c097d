#include "kernels/int8_gemm_avxvnni.h"

#ifdef HEADWISE_INT8_AVXVNNI

#include "kernels/x86_intrinsics.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu_x86.h"

// No FMA in the target: the finish's multiply and add stay two roundings, as in the reference.
#define HEADWISE_TARGET_AVXVNNI __attribute__((target("avx2,avxvnni")))

namespace headwise::kernels {
namespace {

constexpr size_t kRowChunk = 64;  // rows whose corrections are held at a time (stack)

HEADWISE_TARGET_AVXVNNI inline __m256i Load32(const int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// The last k % 32 bytes of a row, zero-padded to 32.
HEADWISE_TARGET_AVXVNNI inline __m256i LoadTail(const int8_t* p, size_t n) {
  alignas(32) int8_t buf[32] = {};
  std::memcpy(buf, p, n);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
}

HEADWISE_TARGET_AVXVNNI int32_t HSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// 128 * sum_k x[r, k] for n rows: what reading w as w + 128 adds to each sum.
HEADWISE_TARGET_AVXVNNI void Corrections(const int8_t* x, size_t n, size_t k, int32_t* c) {
  const __m256i ones = _mm256_set1_epi8(1);
  for (size_t r = 0; r < n; ++r) {
    const int8_t* row = x + r * k;
    __m256i acc = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= k; i += 32) acc = _mm256_dpbusd_avx_epi32(acc, ones, Load32(row + i));
    if (i < k) acc = _mm256_dpbusd_avx_epi32(acc, ones, LoadTail(row + i, k - i));
    c[r] = 128 * HSum(acc);  // |sum| <= 127 k < 2^24: no overflow
  }
}

HEADWISE_TARGET_AVXVNNI inline __m256i Pair(__m256i a, __m256i b) {
  return _mm256_add_epi32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
}
// 128-bit lane l of the result = the four sums of a, b, c, d over their 128-bit lane l.
HEADWISE_TARGET_AVXVNNI inline __m256i Quad(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = Pair(a, b), cd = Pair(c, d);
  return _mm256_add_epi32(_mm256_unpacklo_epi64(ab, cd), _mm256_unpackhi_epi64(ab, cd));
}

struct TileArgs {
  const Int8GemmArgs* a;
  size_t r0;            // first row of the tile
  const int32_t* corr;  // corrections of the tile's rows
  const int8_t* w[4];   // the 4 weight rows (repeats of the last one past `end`)
  size_t o, no;         // first output channel, how many are real (1..4)
  bool prefetch;        // the weight rows of the next tile
};

// R rows (1 or 2) x 4 output channels; lane 4r + j of the reduced vector = (row r, channel j).
template <int R>
HEADWISE_TARGET_AVXVNNI void Tile(const TileArgs& t) {
  const Int8GemmArgs& a = *t.a;
  const size_t k = a.k;
  const int8_t* x = a.xq + t.r0 * k;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i acc[2][4];
#pragma GCC unroll 2
  for (int r = 0; r < 2; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_setzero_si256();
  }
  size_t i = 0;
  for (; i + 32 <= k; i += 32) {
    __m256i w[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      // The next tile's rows follow these in memory (4 * k bytes on); one line per 64 bytes.
      if (t.prefetch && (i & 63) == 0) _mm_prefetch(reinterpret_cast<const char*>(t.w[j] + 4 * k + i), _MM_HINT_T0);
      w[j] = _mm256_xor_si256(Load32(t.w[j] + i), flip);
    }
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      const __m256i xv = Load32(x + r * k + i);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_dpbusd_avx_epi32(acc[r][j], w[j], xv);
    }
  }
  if (i < k) {
    // Zero bytes of x past k meet w + 128 = 128: products 0.
    __m256i w[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) w[j] = _mm256_xor_si256(LoadTail(t.w[j] + i, k - i), flip);
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      const __m256i xv = LoadTail(x + r * k + i, k - i);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_dpbusd_avx_epi32(acc[r][j], w[j], xv);
    }
  }
  const __m256i q0 = Quad(acc[0][0], acc[0][1], acc[0][2], acc[0][3]);
  const __m256i q1 = Quad(acc[1][0], acc[1][1], acc[1][2], acc[1][3]);
  const int32_t c1 = R > 1 ? t.corr[1] : 0;
  const __m256i corr = _mm256_setr_epi32(t.corr[0], t.corr[0], t.corr[0], t.corr[0], c1, c1, c1, c1);
  const __m256i sums = _mm256_sub_epi32(
      _mm256_add_epi32(_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q0, q1, 0x31)), corr);
  const __m128i lanes = _mm_cmpgt_epi32(_mm_set1_epi32(static_cast<int>(t.no)), _mm_setr_epi32(0, 1, 2, 3));
  const __m128 w_scale = _mm_maskload_ps(a.w_scale + t.o, lanes);
  const __m128 bias4 = _mm_maskload_ps(a.bias + t.o, lanes);
  const float s1 = R > 1 ? a.x_scale[t.r0 + 1] : 0.0f;
  const __m256 x_scale = _mm256_set_m128(_mm_set1_ps(s1), _mm_set1_ps(a.x_scale[t.r0]));
  const __m256 scale = _mm256_mul_ps(x_scale, _mm256_set_m128(w_scale, w_scale));
  __m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(sums), scale);
  __asm__("" : "+x"(p));  // kept out of any fused multiply-add, as in Int8FinishX16
  const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(p, _mm256_set_m128(bias4, bias4)),
                                               _mm256_set1_ps(a.out_min)),
                                 _mm256_set1_ps(a.out_max));
  _mm_maskstore_ps(a.y + t.r0 * a.y_stride + t.o, lanes, _mm256_castps256_ps128(v));
  if (R > 1) _mm_maskstore_ps(a.y + (t.r0 + 1) * a.y_stride + t.o, lanes, _mm256_extractf128_ps(v, 1));
}

}  // namespace

bool Int8AvxVnniAvailable() { return CpuX86().avx_vnni; }

HEADWISE_TARGET_AVXVNNI void Int8GemmAvxVnni(const Int8GemmArgs& a, size_t begin, size_t end) {
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
      for (; r + 2 <= n; r += 2) {
        t.r0 = r0 + r;
        t.corr = corr + r;
        t.prefetch = r == 0 && t.no == 4;
        Tile<2>(t);
      }
      if (r < n) {
        t.r0 = r0 + r;
        t.corr = corr + r;
        t.prefetch = r == 0 && t.no == 4;
        Tile<1>(t);
      }
    }
  }
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_AVXVNNI
