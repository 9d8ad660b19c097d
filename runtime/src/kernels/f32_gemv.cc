#include "kernels/f32_gemv.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HEADWISE_F32_GEMV_AVX2 1
#endif

namespace headwise::kernels {
namespace {

inline float Finish(const F32GemvArgs& a, size_t o, float sum) {
  return std::min(a.out_max, std::max(a.out_min, sum + a.bias[o]));
}

// The reduction tree of the header, on 8 lane sums.
inline float ReduceLanes(const float* l) {
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

#ifdef HEADWISE_F32_GEMV_AVX2
bool HaveAvx2Fma() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}

__attribute__((target("avx2,fma"))) float Lanes(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  alignas(32) float l[8];
  _mm256_store_ps(l, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  return ReduceLanes(l);
}

__attribute__((target("avx2,fma"))) float TailSum(const F32GemvArgs& a, const float* w,
                                                  size_t from, float s) {
  for (size_t i = from; i < a.k; ++i) s = std::fma(a.x[i], w[i], s);
  return s;
}

// Two output channels at a time, each with four accumulators (chunk m of 8 floats goes to
// accumulator m % 4): eight independent FMA chains over one sequential pass of the weights.
__attribute__((target("avx2,fma"))) void F32GemvAvx2(const F32GemvArgs& a, size_t begin,
                                                     size_t end) {
  const size_t k = a.k, m8 = k / 8, k8 = m8 * 8, k32 = k / 32 * 32;
  const float* x = a.x;
  size_t o = begin;
  for (; o + 2 <= end; o += 2) {
    const float* w0 = a.w + o * k;
    const float* w1 = w0 + k;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    // The pair of rows after the next one, 256 bytes per step, so it is in L1 when its turn
    // comes. Without this the kernel ran up to 2x slower than XNNPACK whenever the matrices were
    // not in L2 (a whole decoder step's weights are not): rows of k floats are too short for the
    // hardware prefetcher to get ahead. Prefetching past the matrix is harmless (no fault).
    const char* next = reinterpret_cast<const char*>(w1 + 3 * k);
    size_t i = 0;
    for (; i < k32; i += 32) {
      const char* p = next + i * 8;
      _mm_prefetch(p, _MM_HINT_T0);
      _mm_prefetch(p + 64, _MM_HINT_T0);
      _mm_prefetch(p + 128, _MM_HINT_T0);
      _mm_prefetch(p + 192, _MM_HINT_T0);
      const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
      const __m256 x2 = _mm256_loadu_ps(x + i + 16), x3 = _mm256_loadu_ps(x + i + 24);
      a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(w0 + i), a0);
      a1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(w0 + i + 8), a1);
      a2 = _mm256_fmadd_ps(x2, _mm256_loadu_ps(w0 + i + 16), a2);
      a3 = _mm256_fmadd_ps(x3, _mm256_loadu_ps(w0 + i + 24), a3);
      b0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(w1 + i), b0);
      b1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(w1 + i + 8), b1);
      b2 = _mm256_fmadd_ps(x2, _mm256_loadu_ps(w1 + i + 16), b2);
      b3 = _mm256_fmadd_ps(x3, _mm256_loadu_ps(w1 + i + 24), b3);
    }
    // The one to three chunks left go to accumulators 0, 1, 2 (chunk m to m % 4).
    if (i < k8) {
      const __m256 xv = _mm256_loadu_ps(x + i);
      a0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + i), a0);
      b0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + i), b0);
      i += 8;
    }
    if (i < k8) {
      const __m256 xv = _mm256_loadu_ps(x + i);
      a1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + i), a1);
      b1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + i), b1);
      i += 8;
    }
    if (i < k8) {
      const __m256 xv = _mm256_loadu_ps(x + i);
      a2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + i), a2);
      b2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + i), b2);
    }
    a.y[o] = Finish(a, o, TailSum(a, w0, k8, Lanes(a0, a1, a2, a3)));
    a.y[o + 1] = Finish(a, o + 1, TailSum(a, w1, k8, Lanes(b0, b1, b2, b3)));
  }
  if (o < end) {
    const float* w0 = a.w + o * k;
    __m256 acc[4];
    for (__m256& c : acc) c = _mm256_setzero_ps();
    for (size_t m = 0; m < m8; ++m) {
      const __m256 xv = _mm256_loadu_ps(x + 8 * m);
      acc[m % 4] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + 8 * m), acc[m % 4]);
    }
    a.y[o] = Finish(a, o, TailSum(a, w0, k8, Lanes(acc[0], acc[1], acc[2], acc[3])));
  }
}

#endif

}  // namespace

void F32GemvReference(const F32GemvArgs& a, size_t begin, size_t end) {
  const size_t k8 = a.k / 8 * 8;
  for (size_t o = begin; o < end; ++o) {
    const float* w = a.w + o * a.k;
    float acc[4][8] = {};
    for (size_t i = 0; i < k8; i += 8) {
      float* lanes = acc[(i / 8) % 4];
      for (size_t j = 0; j < 8; ++j) lanes[j] = std::fma(a.x[i + j], w[i + j], lanes[j]);
    }
    float lanes[8];
    for (size_t j = 0; j < 8; ++j) lanes[j] = (acc[0][j] + acc[1][j]) + (acc[2][j] + acc[3][j]);
    float s = ReduceLanes(lanes);
    for (size_t i = k8; i < a.k; ++i) s = std::fma(a.x[i], w[i], s);
    a.y[o] = Finish(a, o, s);
  }
}

void F32Gemv(const F32GemvArgs& a, size_t begin, size_t end) {
#ifdef HEADWISE_F32_GEMV_AVX2
  if (HaveAvx2Fma()) {
    F32GemvAvx2(a, begin, end);
    return;
  }
#endif
  F32GemvReference(a, begin, end);
}

bool HaveFastF32Gemv() {
#ifdef HEADWISE_F32_GEMV_AVX2
  return HaveAvx2Fma();
#else
  return false;
#endif
}

const char* F32GemvKernelName() { return HaveFastF32Gemv() ? "f32-gemv-avx2" : "f32-gemv-portable"; }

}  // namespace headwise::kernels
