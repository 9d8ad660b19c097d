// runtime/src/kernels/vec_avx512.h: vec_exp.h's ExpV4 on 16 lanes for x86 CPUs with AVX-512 F
// (CpuX86().avx512), chosen at run time. Functions marked HEADWISE_AVX512 may only be called
// after that flag was true. ExpV16 returns ExpV4's floats lane by lane: every multiply, add and
// subtract is an explicit-rounding intrinsic (round to nearest, the default), which no compiler
// contracts into a fused multiply-add, although an AVX-512 target has FMA (vec_avx2.h says why
// that matters); clamps, floor and the underflow mask are ExpV8's.
//
// Never call vec.h / vec_exp.h / vec_avx2.h arithmetic from a HEADWISE_AVX512 function: inlined
// there it would be compiled with FMA and could round differently. Hand the rest of a row to a
// HEADWISE_AVX2 function instead (a separate call).
#ifndef HEADWISE_RUNTIME_KERNELS_VEC_AVX512_H_
#define HEADWISE_RUNTIME_KERNELS_VEC_AVX512_H_

#include "kernels/vec_avx2.h"

#ifdef HEADWISE_HAVE_AVX2_PATHS
#define HEADWISE_HAVE_AVX512_PATHS 1

#include "kernels/cpu_x86.h"
#include "kernels/x86_intrinsics.h"

#define HEADWISE_AVX512 __attribute__((target("avx512f")))

namespace headwise::kernels {

inline bool CpuHasAvx512() { return CpuX86().avx512; }

namespace avx512 {
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
HEADWISE_AVX512 inline __m512 Mul(__m512 a, __m512 b) { return _mm512_mul_round_ps(a, b, kNearest); }
HEADWISE_AVX512 inline __m512 Add(__m512 a, __m512 b) { return _mm512_add_round_ps(a, b, kNearest); }
HEADWISE_AVX512 inline __m512 Sub(__m512 a, __m512 b) { return _mm512_sub_round_ps(a, b, kNearest); }
HEADWISE_AVX512 inline __m512 Div(__m512 a, __m512 b) { return _mm512_div_round_ps(a, b, kNearest); }
HEADWISE_AVX512 inline __m512 Set(float v) { return _mm512_set1_ps(v); }
HEADWISE_AVX512 inline __m512 Neg(__m512 v) {  // flips the sign bit, as unary minus does
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN)));
}
// The upper 8 lanes (AVX-512 F has no extractf32x8).
HEADWISE_AVX512 inline __m256 High8(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}
}  // namespace avx512

// ExpV4 (and ExpV8), operation for operation, on 16 lanes.
HEADWISE_AVX512 inline __m512 ExpV16(__m512 x) {
  using namespace avx512;
  const __m512 lo = Set(-87.33654475f);
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
  x = _mm512_max_ps(lo, _mm512_min_ps(Set(88.0f), x));
  const __m512 fx = Add(Mul(x, Set(1.44269504088896341f)), Set(0.5f));
  const __m512 fn = _mm512_roundscale_ps(fx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const __m512i n = _mm512_cvttps_epi32(fn);  // exact: fn is an integer
  __m512 r = Sub(x, Mul(fn, Set(0.693359375f)));
  r = Sub(r, Mul(fn, Set(-2.12194440e-4f)));
  const __m512 z = Mul(r, r);
  __m512 y = Add(Mul(r, Set(1.9875691500e-4f)), Set(1.3981999507e-3f));
  y = Add(Mul(y, r), Set(8.3334519073e-3f));
  y = Add(Mul(y, r), Set(4.1665795894e-2f));
  y = Add(Mul(y, r), Set(1.6666665459e-1f));
  y = Add(Mul(y, r), Set(5.0000001201e-1f));
  y = Add(Add(Mul(y, z), r), Set(1.0f));
  const __m512 scale =
      _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, _mm512_set1_epi32(127)), 23));
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~underflow), Mul(y, scale));
}

}  // namespace headwise::kernels

#endif  // HEADWISE_HAVE_AVX2_PATHS
#endif  // HEADWISE_RUNTIME_KERNELS_VEC_AVX512_H_
