// runtime/src/kernels/vec_avx2.h: 256-bit forms of vec.h / vec_exp.h for x86 CPUs with AVX2 and
// FMA, chosen at run time (the build targets baseline x86-64; no -march flags). Functions marked
// HEADWISE_AVX2 or HEADWISE_AVX2_FMA may only be called after CpuHasAvx2Fma() returned true.
// ExpV8 performs ExpV4's operations in the same order on 8 lanes, so it returns the same floats:
// HEADWISE_AVX2 code is compiled without FMA, because GCC contracts a * b + c into one fused
// multiply-add wherever the target has one (-ffp-contract=fast is its default, also with
// -std=c++17), and the baseline build of ExpV4 has none. HEADWISE_AVX2_FMA is for kernels whose
// contract allows other rounding (attention).
#ifndef HEADWISE_RUNTIME_KERNELS_VEC_AVX2_H_
#define HEADWISE_RUNTIME_KERNELS_VEC_AVX2_H_

#if defined(__x86_64__) || defined(__i386__)
#define HEADWISE_HAVE_AVX2_PATHS 1

#include "kernels/x86_intrinsics.h"

#include <cstdint>
#include <cstring>

#include "kernels/vec.h"

#define HEADWISE_AVX2 __attribute__((target("avx2")))
#define HEADWISE_AVX2_FMA __attribute__((target("avx2,fma")))

namespace headwise::kernels {

inline bool CpuHasAvx2Fma() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}

typedef float V8 __attribute__((vector_size(32)));
typedef int32_t V8i __attribute__((vector_size(32)));

HEADWISE_AVX2 inline V8 LoadV8(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
HEADWISE_AVX2 inline void StoreV8(float* p, V8 v) { std::memcpy(p, &v, sizeof v); }
HEADWISE_AVX2 inline V4 LowV4(V8 v) { return V4{v[0], v[1], v[2], v[3]}; }
HEADWISE_AVX2 inline V4 HighV4(V8 v) { return V4{v[4], v[5], v[6], v[7]}; }

// vec_exp.h's ExpV4: the same floats from fewer instructions. The clamps are minps / maxps with
// the constant first (x > 88 ? 88 : x is min(88, x), NaN included: both return x), floor(fx)
// is one roundps where ExpV4 truncates and corrects (the same integer for |fx| < 2^31; the
// clamp keeps fx within [-126, 128]), and the underflow lanes are cleared with andnps; every
// arithmetic operation is ExpV4's, in its order.
HEADWISE_AVX2 inline V8 ExpV8(V8 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654475f);
  const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_max_ps(lo, _mm256_min_ps(_mm256_set1_ps(88.0f), x));
  const V8 fx = x * 1.44269504088896341f + 0.5f;
  const V8 fn = _mm256_floor_ps(fx);
  const V8i n = __builtin_convertvector(fn, V8i);  // exact: fn is an integer
  V8 r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  const V8 z = r * r;
  V8 y = r * 1.9875691500e-4f + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  const V8i bits = (n + 127) << 23;
  V8 scale;
  __builtin_memcpy(&scale, &bits, sizeof scale);
  const V8 result = y * scale;
  return _mm256_andnot_ps(underflow, result);
}

}  // namespace headwise::kernels

#endif  // x86
#endif  // HEADWISE_RUNTIME_KERNELS_VEC_AVX2_H_
