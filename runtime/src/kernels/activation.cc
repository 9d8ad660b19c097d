#include "kernels/activation.h"

#include <cmath>

#include "kernels/vec.h"
#include "kernels/vec_exp.h"
#include "kernels/vec_avx2.h"
#include "kernels/vec_avx512.h"

namespace headwise::kernels {

void ReluInPlace(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

#ifdef HEADWISE_HAVE_AVX2_PATHS
namespace {
// The same floats as the portable loop (ExpV8 is ExpV4 on 8 lanes).
__attribute__((noinline)) HEADWISE_AVX2 void SwishInPlaceAvx2(float* x, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const V8 v = LoadV8(x + i);
    StoreV8(x + i, v / (ExpV8(-v) + 1.0f));
  }
  for (; i < n; ++i) {
    const V4 v = V4{} + x[i];
    x[i] = (v / (ExpV4(-v) + 1.0f))[0];
  }
}

#ifdef HEADWISE_HAVE_AVX512_PATHS
// The same floats again: ExpV16 is ExpV4 on 16 lanes; the rest of the row (under 16 values)
// goes to the AVX2 loop, which treats its last n % 8 values as before.
HEADWISE_AVX512 void SwishInPlaceAvx512(float* x, size_t n) {
  using namespace avx512;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    _mm512_storeu_ps(x + i, Div(v, Add(ExpV16(Neg(v)), Set(1.0f))));
  }
  if (i < n) SwishInPlaceAvx2(x + i, n - i);
}
#endif
}  // namespace
#endif

void SwishInPlace(float* x, size_t n) {
#ifdef HEADWISE_HAVE_AVX2_PATHS
#ifdef HEADWISE_HAVE_AVX512_PATHS
  if (kernels::CpuHasAvx2Fma() && kernels::CpuHasAvx512()) return SwishInPlaceAvx512(x, n);
#endif
  if (kernels::CpuHasAvx2Fma()) return SwishInPlaceAvx2(x, n);
#endif
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const V4 v = LoadV4(x + i);
    StoreV4(x + i, v / (ExpV4(-v) + 1.0f));
  }
  for (; i < n; ++i) {
    const V4 v = V4{} + x[i];
    x[i] = (v / (ExpV4(-v) + 1.0f))[0];
  }
}

void GeluInPlace(float* x, size_t n) {
  // erf has no vector form here; GELU models are the rare case among Marian checkpoints.
  const float kAlpha = static_cast<float>(M_SQRT1_2);
  for (size_t i = 0; i < n; ++i) x[i] = x[i] * 0.5f * (1.0f + std::erf(x[i] * kAlpha));
}

void ApplyActivation(Activation a, float* x, size_t n) {
  switch (a) {
    case Activation::kRelu: return ReluInPlace(x, n);
    case Activation::kSwish: return SwishInPlace(x, n);
    case Activation::kGelu: return GeluInPlace(x, n);
  }
}

}  // namespace headwise::kernels
