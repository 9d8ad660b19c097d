// runtime/src/kernels/vec_exp.h: exp over 4 floats at a time (Cephes' expf polynomial with
// Cody-Waite range reduction, about 1 ulp), for the softmaxes and swish. std::exp in a loop
// stays scalar: libm calls do not vectorise without -ffast-math.
//
// Inputs below -87.3 (including -inf) give exactly 0, so masked scores vanish; inputs above 88
// saturate to exp(88) ~ 1.65e38 instead of overflowing; NaN stays NaN.
#ifndef HEADWISE_RUNTIME_KERNELS_VEC_EXP_H_
#define HEADWISE_RUNTIME_KERNELS_VEC_EXP_H_

#include <cstdint>

#include "kernels/vec.h"

namespace headwise::kernels {

typedef int32_t V4i __attribute__((vector_size(16)));

inline V4 ExpV4(V4 x) {
  const V4i underflow = x < -87.33654475f;
  x = x > 88.0f ? V4{} + 88.0f : x;
  x = x < -87.33654475f ? V4{} - 87.33654475f : x;
  // n = round(x / ln 2); r = x - n ln 2 in two parts (exact first product).
  const V4 fx = x * 1.44269504088896341f + 0.5f;
  V4i n = __builtin_convertvector(fx, V4i);  // truncates toward zero
  V4 fn = __builtin_convertvector(n, V4);
  const V4i too_big = fn > fx;                // make it floor for negative fx
  n += too_big;                               // true lanes are -1
  fn = __builtin_convertvector(n, V4);
  V4 r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  const V4 z = r * r;
  V4 y = r * 1.9875691500e-4f + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  const V4i bits = (n + 127) << 23;
  V4 scale;
  __builtin_memcpy(&scale, &bits, sizeof scale);
  const V4 result = y * scale;
  return underflow ? V4{} : result;
}

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_VEC_EXP_H_
