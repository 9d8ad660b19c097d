#include "kernels/f32_gemm_avx2.h"

#ifdef HEADWISE_F32_GEMM_AVX2

#include <algorithm>

#include "kernels/cpu_x86.h"
#include "kernels/f32_gemm_kernel.h"
#include "kernels/x86_intrinsics.h"

namespace headwise::kernels {
namespace {

// The tile loops run a handful of times each; unrolled, the accumulators live in registers.
#define HEADWISE_UNROLL _Pragma("GCC unroll 16")
#define HEADWISE_GEMM_TARGET __attribute__((target("avx2,fma,f16c"), always_inline)) inline

template <bool F16>
HEADWISE_GEMM_TARGET __m256 LoadW(const void* w, size_t at) {
  if constexpr (F16) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(w) + at)));
  } else {
    return _mm256_loadu_ps(static_cast<const float*>(w) + at);
  }
}

// [sum(a), sum(b), sum(c), sum(d)], each over its 8 lanes in the header's order: the first two
// horizontal adds form (l0 + l1) + (l2 + l3) in the low half and (l4 + l5) + (l6 + l7) in the
// high half of each lane group, the last add joins the halves.
HEADWISE_GEMM_TARGET __m128 Reduce4(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

// Rows [r0, r0 + MR) x channels [o, o + NR): one 8-lane accumulator per output. Each step of
// the main loop reads one 64-byte line of every weight row (2 chunks of F32, 4 of F16) and
// prefetches the same line of the next tile's rows (rows of a few KB are too short for the
// hardware prefetcher to get ahead of, as kernels/f32_gemv.cc found).
template <int MR, int NR, bool F16>
__attribute__((target("avx2,fma,f16c"))) void Tile(const F32GemmArgs& a, size_t r0, size_t o) {
  constexpr size_t kLine = F16 ? 32 : 16;  // weights per 64-byte line
  constexpr size_t kSize = F16 ? 2 : 4;
  const size_t k = a.k, k8 = k / 8 * 8, kl = k / kLine * kLine;
  const float* x[MR];
  HEADWISE_UNROLL
  for (int r = 0; r < MR; ++r) x[r] = a.x + (r0 + static_cast<size_t>(r)) * a.x_stride;
  const size_t w0 = o * k;  // element offset of the tile's first weight row
  const char* next = static_cast<const char*>(a.w) + (w0 + NR * k) * kSize;
  __m256 acc[MR][NR];
  HEADWISE_UNROLL
  for (int r = 0; r < MR; ++r) {
    HEADWISE_UNROLL
    for (int j = 0; j < NR; ++j) acc[r][j] = _mm256_setzero_ps();
  }
  size_t i = 0;
  for (; i < kl; i += kLine) {
    HEADWISE_UNROLL
    for (int j = 0; j < NR; ++j) _mm_prefetch(next + (j * k + i) * kSize, _MM_HINT_T0);
    HEADWISE_UNROLL
    for (size_t c = 0; c < kLine; c += 8) {
      __m256 w[NR];
      HEADWISE_UNROLL
      for (int j = 0; j < NR; ++j) w[j] = LoadW<F16>(a.w, w0 + j * k + i + c);
      HEADWISE_UNROLL
      for (int r = 0; r < MR; ++r) {
        const __m256 xv = _mm256_loadu_ps(x[r] + i + c);
        HEADWISE_UNROLL
        for (int j = 0; j < NR; ++j) acc[r][j] = _mm256_fmadd_ps(xv, w[j], acc[r][j]);
      }
    }
  }
  for (; i < k8; i += 8) {
    __m256 w[NR];
    HEADWISE_UNROLL
    for (int j = 0; j < NR; ++j) w[j] = LoadW<F16>(a.w, w0 + j * k + i);
    HEADWISE_UNROLL
    for (int r = 0; r < MR; ++r) {
      const __m256 xv = _mm256_loadu_ps(x[r] + i);
      HEADWISE_UNROLL
      for (int j = 0; j < NR; ++j) acc[r][j] = _mm256_fmadd_ps(xv, w[j], acc[r][j]);
    }
  }
  constexpr int kPadded = (NR + 3) / 4 * 4;
  HEADWISE_UNROLL
  for (int r = 0; r < MR; ++r) {
    __m256 v[kPadded];
    HEADWISE_UNROLL
    for (int j = 0; j < kPadded; ++j) v[j] = j < NR ? acc[r][j < NR ? j : 0] : _mm256_setzero_ps();
    alignas(16) float s[kPadded];
    HEADWISE_UNROLL
    for (int j = 0; j < kPadded; j += 4) _mm_store_ps(s + j, Reduce4(v[j], v[j + 1], v[j + 2], v[j + 3]));
    float* y = a.y + (r0 + static_cast<size_t>(r)) * a.y_stride;
    HEADWISE_UNROLL
    for (int j = 0; j < NR; ++j) {
      const size_t oj = o + static_cast<size_t>(j);
      y[oj] = F32Finish(a, oj, F32TailSum(a, x[r], oj, k8, s[j]));
    }
  }
}

// Rows [r0, r0 + MR) x channels [lo, hi): tiles of NR channels, then single channels.
template <int MR, int NR, bool F16>
__attribute__((target("avx2,fma,f16c"))) void Channels(const F32GemmArgs& a, size_t r0,
                                                       size_t lo, size_t hi) {
  size_t o = lo;
  for (; o + NR <= hi; o += NR) Tile<MR, NR, F16>(a, r0, o);
  for (; o < hi; ++o) Tile<MR, 1, F16>(a, r0, o);
}

// Tiles of 4 rows x 3 channels (12 accumulators, 3 weight vectors and the x vector: the 16
// ymm registers); the 1-3 rows left take as many channels as keep 8 or more chains going.
template <bool F16>
__attribute__((target("avx2,fma,f16c"))) void Gemm(const F32GemmArgs& a, size_t begin,
                                                   size_t end) {
  const size_t block = F32GemmBlockChannels(a.k, F16);
  for (size_t lo = begin; lo < end; lo += block) {
    const size_t hi = std::min(end, lo + block);
    size_t r = 0;
    for (; r + 4 <= a.rows; r += 4) Channels<4, 3, F16>(a, r, lo, hi);
    switch (a.rows - r) {
      case 3: Channels<3, 3, F16>(a, r, lo, hi); break;
      case 2: Channels<2, 4, F16>(a, r, lo, hi); break;
      case 1: Channels<1, 8, F16>(a, r, lo, hi); break;
      default: break;
    }
  }
}

}  // namespace

bool F32GemmAvx2Available() {
  const X86Features& f = CpuX86();
  return f.avx2 && f.fma && f.f16c;
}

void F32GemmAvx2(const F32GemmArgs& a, size_t begin, size_t end) {
  if (a.f16) {
    Gemm<true>(a, begin, end);
  } else {
    Gemm<false>(a, begin, end);
  }
}

}  // namespace headwise::kernels

#endif  // HEADWISE_F32_GEMM_AVX2
