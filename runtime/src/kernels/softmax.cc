#include "kernels/softmax.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/vec.h"
#include "kernels/vec_exp.h"
#include "kernels/vec_avx2.h"
#include "kernels/vec_avx512.h"

#ifdef HEADWISE_HAVE_AVX2_PATHS
#include <immintrin.h>
#endif

namespace headwise::kernels {
namespace {

float Max(const float* x, size_t n) {
  V4 m = V4{} - std::numeric_limits<float>::infinity();
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const V4 v = LoadV4(x + i);
    m = v > m ? v : m;
  }
  float s = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < 4; ++k) s = m[k] > s ? m[k] : s;
  for (; i < n; ++i) s = x[i] > s ? x[i] : s;
  return s;
}

// The scalar tail goes through the same polynomial as the vector body so that a value's exp
// does not depend on where it sits in the row.
float ExpScalar(float v) { return ExpV4(V4{} + v)[0]; }

#ifdef HEADWISE_HAVE_AVX2_PATHS
// The AVX2 bodies below compute the same floats as the portable ones: ExpV8 is ExpV4 on 8
// lanes, and every sum keeps the portable accumulators' lanes and order (a V8 accumulator is
// the V4 pair acc0 | acc1, or two V4 additions in turn where the portable loop has one).
HEADWISE_AVX2 float MaxAvx2(const float* x, size_t n) {
  V8 m = V8{} - std::numeric_limits<float>::infinity();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const V8 v = LoadV8(x + i);
    m = v > m ? v : m;
  }
  float s = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < 8; ++k) s = m[k] > s ? m[k] : s;
  for (; i < n; ++i) s = x[i] > s ? x[i] : s;
  return s;
}

// MaxAvx2's float from four independent chains (one chain waits on vmaxps' latency at every
// step): the maximum of a set does not depend on the order it is taken in, NaN never wins in
// either (v > m is false) and a non-zero maximum has one bit pattern. Only a maximum of zero,
// where +0 and -0 tie and the order picks the sign, is taken again by MaxAvx2.
HEADWISE_AVX2 float MaxAvx2Wide(const float* x, size_t n) {
  V8 m0 = V8{} - std::numeric_limits<float>::infinity(), m1 = m0, m2 = m0, m3 = m0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const V8 a = LoadV8(x + i), b = LoadV8(x + i + 8), c = LoadV8(x + i + 16), d = LoadV8(x + i + 24);
    m0 = a > m0 ? a : m0;
    m1 = b > m1 ? b : m1;
    m2 = c > m2 ? c : m2;
    m3 = d > m3 ? d : m3;
  }
  m0 = m1 > m0 ? m1 : m0;
  m2 = m3 > m2 ? m3 : m2;
  V8 m = m2 > m0 ? m2 : m0;
  for (; i + 8 <= n; i += 8) {
    const V8 v = LoadV8(x + i);
    m = v > m ? v : m;
  }
  float s = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < 8; ++k) s = m[k] > s ? m[k] : s;
  for (; i < n; ++i) s = x[i] > s ? x[i] : s;
  return s == 0.0f ? MaxAvx2(x, n) : s;
}

HEADWISE_AVX2 void ExpInPlaceAvx2(float* x, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) StoreV8(x + i, ExpV8(LoadV8(x + i)));
  for (; i < n; ++i) x[i] = ExpScalar(x[i]);
}

// x[i] *= 1 / sum: the softmaxes' last pass.
HEADWISE_AVX2 inline void ScaleByInverseAvx2(float* x, size_t n, float sum) {
  const float inv = 1.0f / sum;
  const V8 vinv = V8{} + inv;
  size_t j = 0;
  for (; j + 8 <= n; j += 8) StoreV8(x + j, LoadV8(x + j) * vinv);
  for (; j < n; ++j) x[j] *= inv;
}

HEADWISE_AVX2 void SoftmaxInPlaceAvx2(float* x, size_t n, float m) {
  V4 acc = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const V8 e = ExpV8(LoadV8(x + i) - m);
    StoreV8(x + i, e);
    acc += LowV4(e);
    acc += HighV4(e);
  }
  for (; i + 4 <= n; i += 4) {
    const V4 e = ExpV4(LoadV4(x + i) - m);
    StoreV4(x + i, e);
    acc += e;
  }
  float sum = SumV4(acc);
  if (i < n) {
    // The last n % 4 exps in one vector (ExpScalar is lane 0 of the same ExpV4, and 0 + v is v
    // but for -0, whose exp is exp(+0)), summed one by one as before.
    V4 t = V4{} - m;
    for (size_t k = 0; i + k < n; ++k) t[k] = x[i + k] - m;
    const V4 e = ExpV4(t);
    for (size_t k = 0; i < n; ++i, ++k) {
      x[i] = e[k];
      sum += x[i];
    }
  }
  ScaleByInverseAvx2(x, n, sum);
}

// The second half of SoftmaxInPlaceAvx2 for exponentials already in x: their sum in its order
// (one 4-lane accumulator over the blocks of 4 in turn, SumV4, then the rest one by one) and x
// scaled by the sum's inverse as there.
__attribute__((noinline)) HEADWISE_AVX2 void NormalizeExpsAvx2(float* x, size_t n) {
  V4 acc = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) acc += LoadV4(x + i);
  float sum = SumV4(acc);
  for (; i < n; ++i) sum += x[i];
  ScaleByInverseAvx2(x, n, sum);
}

HEADWISE_AVX2 size_t FirstIndexOfAvx2(const float* x, size_t n, float value) {
  const __m256 v = _mm256_set1_ps(value);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), v, _CMP_EQ_OQ));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
  for (; i < n; ++i) {
    if (x[i] == value) return i;
  }
  return n - 1;
}

// Eight scores at a time with the scalar loop's operations (sub, sub, add: nothing to contract).
HEADWISE_AVX2 size_t FirstScoreAboveAvx2(const float* x, size_t from, size_t n, float base,
                                         float max, float log_sum, float threshold) {
  const __m256 vb = _mm256_set1_ps(base), vm = _mm256_set1_ps(max), vl = _mm256_set1_ps(log_sum);
  const __m256 vt = _mm256_set1_ps(threshold);
  size_t i = from;
  for (; i + 8 <= n; i += 8) {
    const __m256 s = _mm256_add_ps(vb, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vl));
    const int mask = _mm256_movemask_ps(_mm256_cmp_ps(s, vt, _CMP_GT_OQ));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
  for (; i < n; ++i) {
    if (base + ((x[i] - max) - log_sum) > threshold) return i;
  }
  return n;
}

// The portable sum from element i on, with lanes[0..8) the 8 lane sums of the elements before i
// (i a multiple of 8): SumExpAvx512 hands its rest of the row here. The lanes come by pointer,
// not as a 256-bit argument: a function that takes one is left by GCC without vzeroupper, and
// the dirty upper halves then slowed every SSE instruction after it (glibc's exp 15x).
__attribute__((noinline)) HEADWISE_AVX2 float SumExpAvx2From(const float* x, size_t n, float m, size_t i,
                                                             const float* lanes) {
  V8 acc;
  std::memcpy(&acc, lanes, sizeof acc);
  for (; i + 8 <= n; i += 8) acc += ExpV8(LoadV8(x + i) - m);
  V4 acc0 = LowV4(acc);
  const V4 acc1 = HighV4(acc);
  for (; i + 4 <= n; i += 4) acc0 += ExpV4(LoadV4(x + i) - m);
  float sum = SumV4(acc0 + acc1);
  for (; i < n; ++i) sum += ExpScalar(x[i] - m);
  return sum;
}

HEADWISE_AVX2 float SumExpAvx2(const float* x, size_t n, float m) {
  const float zero[8] = {};
  return SumExpAvx2From(x, n, m, 0, zero);
}
#endif

#ifdef HEADWISE_HAVE_AVX512_PATHS
// exp(x[i] - m) in place, 16 lanes at a time and the rest in one masked vector: ExpV16 gives
// ExpV4's floats lane by lane, so these are the exponentials SoftmaxInPlaceAvx2 computes, in
// about half its instructions and without its 4-lane and scalar tails (attention rows are
// short: a few blocks and a tail each). Lanes past n are neither read nor written.
HEADWISE_AVX512 void ExpShiftedAvx512(float* x, size_t n, float m) {
  const __m512 vm = _mm512_set1_ps(m);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(x + i, ExpV16(avx512::Sub(_mm512_loadu_ps(x + i), vm)));
  }
  if (i < n) {
    const __mmask16 k = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(x + i, k, ExpV16(avx512::Sub(_mm512_maskz_loadu_ps(k, x + i), vm)));
  }
}

// 16 values at a time into the AVX2 loop's 8 accumulator lanes (lane k of acc sums elements
// 8j + k in order: the low half of a block, then its high half), so the sum is SumExpAvx2's.
HEADWISE_AVX512 float SumExpAvx512(const float* x, size_t n, float m) {
  const __m512 vm = _mm512_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = ExpV16(avx512::Sub(_mm512_loadu_ps(x + i), vm));
    acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
    acc = _mm256_add_ps(acc, avx512::High8(e));
  }
  float lanes[8];
  std::memcpy(lanes, &acc, sizeof lanes);
  return SumExpAvx2From(x, n, m, i, lanes);
}
#endif

}  // namespace

size_t FirstIndexOf(const float* x, size_t n, float value) {
#ifdef HEADWISE_HAVE_AVX2_PATHS
  if (CpuHasAvx2Fma()) return FirstIndexOfAvx2(x, n, value);
#endif
  size_t i = 0;
  while (i + 1 < n && !(x[i] == value)) ++i;
  return i;
}

size_t FirstScoreAbove(const float* x, size_t from, size_t n, float base, float max,
                       float log_sum, float threshold) {
#ifdef HEADWISE_HAVE_AVX2_PATHS
  if (CpuHasAvx2Fma()) return FirstScoreAboveAvx2(x, from, n, base, max, log_sum, threshold);
#endif
  for (size_t i = from; i < n; ++i) {
    if (base + ((x[i] - max) - log_sum) > threshold) return i;
  }
  return n;
}

void ExpInPlace(float* x, size_t n) {
#ifdef HEADWISE_HAVE_AVX2_PATHS
  if (CpuHasAvx2Fma()) return ExpInPlaceAvx2(x, n);
#endif
  size_t i = 0;
  for (; i + 4 <= n; i += 4) StoreV4(x + i, ExpV4(LoadV4(x + i)));
  for (; i < n; ++i) x[i] = ExpScalar(x[i]);
}

void SoftmaxInPlace(float* x, size_t n) {
#ifdef HEADWISE_HAVE_AVX2_PATHS
  if (CpuHasAvx2Fma()) {
#ifdef HEADWISE_HAVE_AVX512_PATHS
    if (CpuHasAvx512()) {  // the same floats as SoftmaxInPlaceAvx2
      ExpShiftedAvx512(x, n, MaxAvx2(x, n));
      return NormalizeExpsAvx2(x, n);
    }
#endif
    return SoftmaxInPlaceAvx2(x, n, MaxAvx2(x, n));
  }
#endif
  const float m = Max(x, n);
  V4 acc = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const V4 e = ExpV4(LoadV4(x + i) - m);
    StoreV4(x + i, e);
    acc += e;
  }
  float sum = SumV4(acc);
  for (; i < n; ++i) {
    x[i] = ExpScalar(x[i] - m);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  for (size_t j = 0; j < n; ++j) x[j] *= inv;
}

LogSoftmaxNorm LogSoftmaxNormalizer(const float* x, size_t n) {
#ifdef HEADWISE_HAVE_AVX2_PATHS
  if (CpuHasAvx2Fma()) {
    const float mx = MaxAvx2Wide(x, n);
#ifdef HEADWISE_HAVE_AVX512_PATHS
    if (CpuHasAvx512()) return {mx, std::log(SumExpAvx512(x, n, mx))};
#endif
    return {mx, std::log(SumExpAvx2(x, n, mx))};
  }
#endif
  const float m = Max(x, n);
  V4 acc0 = {}, acc1 = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    acc0 += ExpV4(LoadV4(x + i) - m);
    acc1 += ExpV4(LoadV4(x + i + 4) - m);
  }
  for (; i + 4 <= n; i += 4) acc0 += ExpV4(LoadV4(x + i) - m);
  float sum = SumV4(acc0 + acc1);
  for (; i < n; ++i) sum += ExpScalar(x[i] - m);
  return {m, std::log(sum)};
}

}  // namespace headwise::kernels
