#include "kernels/softmax.h"

#include <cmath>
#include <limits>

#include "kernels/vec.h"
#include "kernels/vec_exp.h"

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

}  // namespace

void ExpInPlace(float* x, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) StoreV4(x + i, ExpV4(LoadV4(x + i)));
  for (; i < n; ++i) x[i] = ExpScalar(x[i]);
}

void SoftmaxInPlace(float* x, size_t n) {
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
