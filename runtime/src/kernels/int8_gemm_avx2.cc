// The x86 AVX2 int8 family (int8_gemm_avx2.h). Int8Finish runs inside the avx2 functions here:
// AVX2 does not include FMA, so GCC cannot contract its multiply-add (int8_gemm_kernel.h).
#include "kernels/int8_gemm_avx2.h"

#ifdef HEADWISE_INT8_AVX2
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/int8_gemm_kernel.h"

namespace headwise::kernels {
namespace {

__attribute__((target("avx2"))) inline int32_t HSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// sum over 32 bytes of x * w as int32 lanes: |x| (u8) * sign(w, x) (s8) in pairs to int16,
// then pairs to int32.
__attribute__((target("avx2"))) inline __m256i Dot32(__m256i ax, __m256i x, __m256i w,
                                                     __m256i ones) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(w, x)), ones);
}

// Four output channels at a time for every row: the four weight rows (4 * k bytes) stay in L1
// while the rows of x stream past them.
__attribute__((target("avx2"))) void Gemm(const Int8GemmArgs& a, size_t begin, size_t end) {
  const size_t k = a.k, k32 = k / 32 * 32;
  const __m256i ones = _mm256_set1_epi16(1);
  size_t o = begin;
  for (; o + 4 <= end; o += 4) {
    const int8_t* w0 = a.w + o * k;
    const int8_t* w1 = w0 + k;
    const int8_t* w2 = w1 + k;
    const int8_t* w3 = w2 + k;
    for (size_t r = 0; r < a.rows; ++r) {
      const int8_t* x = a.xq + r * k;
      __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
      for (size_t i = 0; i < k32; i += 32) {
        if (r == 0 && (i & 63) == 0) {
          // The next four weight rows, one cache line each per 64 bytes read here: the rows
          // are short (k bytes), too short for the hardware prefetcher to catch up from DRAM.
          // Prefetching past the end of the matrix is harmless (no fault).
          _mm_prefetch(reinterpret_cast<const char*>(w3 + k + i), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(w3 + 2 * k + i), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(w3 + 3 * k + i), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(w3 + 4 * k + i), _MM_HINT_T0);
        }
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
        const __m256i ax = _mm256_sign_epi8(xv, xv);
        c0 = _mm256_add_epi32(c0, Dot32(ax, xv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0 + i)), ones));
        c1 = _mm256_add_epi32(c1, Dot32(ax, xv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w1 + i)), ones));
        c2 = _mm256_add_epi32(c2, Dot32(ax, xv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w2 + i)), ones));
        c3 = _mm256_add_epi32(c3, Dot32(ax, xv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w3 + i)), ones));
      }
      float* y = a.y + r * a.y_stride;
      y[o + 0] = Int8Finish(a, r, o + 0, HSum(c0) + Int8DotTail(x, w0, k32, k));
      y[o + 1] = Int8Finish(a, r, o + 1, HSum(c1) + Int8DotTail(x, w1, k32, k));
      y[o + 2] = Int8Finish(a, r, o + 2, HSum(c2) + Int8DotTail(x, w2, k32, k));
      y[o + 3] = Int8Finish(a, r, o + 3, HSum(c3) + Int8DotTail(x, w3, k32, k));
    }
  }
  if (o < end) Int8GemmReference(a, o, end);
}

// QuantizeRowsDynamic for one row, 8 floats at a time: the same max, the same x * inv products
// and the same round-to-nearest-even conversion (MXCSR default) as the portable loop, so the
// bytes are identical.
__attribute__((target("avx2"))) float QuantizeRowAvx2(const float* row, size_t cols, int8_t* out) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 vmax = _mm256_setzero_ps();
  size_t c = 0;
  for (; c + 8 <= cols; c += 8) vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(row + c), abs_mask));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  float max_abs = _mm_cvtss_f32(m);
  for (; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
  if (!(max_abs > 0.0f)) {
    std::fill(out, out + cols, int8_t{0});
    return 0.0f;
  }
  const float inv = 127.0f / max_abs;
  const __m256 vinv = _mm256_set1_ps(inv);
  // The vector loop does not clamp: |x * inv| <= 127 holds unless inv overflows to infinity
  // (a row of subnormals, max_abs < 127 / FLT_MAX), which the clamped scalar loop handles.
  const size_t vector_cols = std::isinf(inv) ? 0 : cols / 32 * 32;
  c = 0;
  for (; c < vector_cols; c += 32) {
    const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row + c), vinv));
    const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row + c + 8), vinv));
    const __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row + c + 16), vinv));
    const __m256i e = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row + c + 24), vinv));
    // packs work per 128-bit lane; the permute restores the element order.
    const __m256i ab = _mm256_packs_epi32(a, b), de = _mm256_packs_epi32(d, e);
    const __m256i q = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, de),
                                                  _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c), q);
  }
  for (; c < cols; ++c) {
    out[c] = static_cast<int8_t>(std::lrintf(std::min(127.0f, std::max(-127.0f, row[c] * inv))));
  }
  return max_abs / 127.0f;
}
}  // namespace

bool Int8Avx2Available() {
  static const bool have = __builtin_cpu_supports("avx2");
  return have;
}

void Int8GemmAvx2(const Int8GemmArgs& a, size_t begin, size_t end) { Gemm(a, begin, end); }

void QuantizeRowsAvx2(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                      float* scale) {
  for (size_t r = 0; r < rows; ++r) scale[r] = QuantizeRowAvx2(x + r * x_stride, cols, q + r * cols);
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_AVX2
