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

__attribute__((target("avx2,fma"))) float Lanes(__m256 acc) {
  alignas(32) float l[8];
  _mm256_store_ps(l, acc);
  return ReduceLanes(l);
}

__attribute__((target("avx2,fma"))) float TailSum(const F32GemvArgs& a, const float* w,
                                                  size_t from, float s) {
  for (size_t i = from; i < a.k; ++i) s = std::fma(a.x[i], w[i], s);
  return s;
}

// R consecutive output channels, one 8-lane accumulator each (the header's order): R
// independent FMA chains over one sequential pass of R contiguous weight rows. With R = 8 the
// chains cover the FMA latency and each chunk of x is loaded once for eight rows.
template <size_t R>
__attribute__((target("avx2,fma"))) inline void RowsAvx2(const F32GemvArgs& a, size_t o) {
  const size_t k = a.k, k8 = k / 8 * 8;
  const float* x = a.x;
  const float* w = a.w + o * k;
  __m256 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  // The next block of R rows (R k floats, contiguous), R 32 bytes per chunk, so it is in L2
  // when its turn comes: rows of k floats are too short for the hardware prefetcher to get
  // ahead, and without this the kernel ran up to 2x slower than XNNPACK whenever the matrices
  // were not in L2. Into L2, not L1: a block is R k 4 bytes, 16 KiB at k = 512 and 32 KiB at
  // k = 1024, as large as a 32 KiB L1, and prefetching it into L1 evicted the block being read
  // (bench/results/2026-12-06-f32-gemv-prefetch-x86-2core.md). Prefetching past the matrix is
  // harmless (no fault).
  const char* next = reinterpret_cast<const char*>(w + R * k);
  for (size_t i = 0; i < k8; i += 8) {
    const char* p = next + i * 4 * R;
    for (size_t b = 0; b < 32 * R; b += 64) _mm_prefetch(p + b, _MM_HINT_T1);
    const __m256 xv = _mm256_loadu_ps(x + i);
    for (size_t r = 0; r < R; ++r) {
      acc[r] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w + r * k + i), acc[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) {
    a.y[o + r] = Finish(a, o + r, TailSum(a, w + r * k, k8, Lanes(acc[r])));
  }
}

__attribute__((target("avx2,fma"))) void F32GemvAvx2(const F32GemvArgs& a, size_t begin,
                                                     size_t end) {
  size_t o = begin;
  for (; o + 8 <= end; o += 8) RowsAvx2<8>(a, o);
  if (o + 4 <= end) {
    RowsAvx2<4>(a, o);
    o += 4;
  }
  if (o + 2 <= end) {
    RowsAvx2<2>(a, o);
    o += 2;
  }
  if (o < end) RowsAvx2<1>(a, o);
}

#endif

}  // namespace

void F32GemvReference(const F32GemvArgs& a, size_t begin, size_t end) {
  const size_t k8 = a.k / 8 * 8;
  for (size_t o = begin; o < end; ++o) {
    const float* w = a.w + o * a.k;
    float lanes[8] = {};
    for (size_t i = 0; i < k8; i += 8) {
      for (size_t j = 0; j < 8; ++j) lanes[j] = std::fma(a.x[i + j], w[i + j], lanes[j]);
    }
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
