#include "kernels/layernorm.h"

#include <cmath>

#include "kernels/vec.h"

namespace headwise::kernels {

void AddLayerNorm(float* x, const float* residual, size_t residual_stride, const float* gamma,
                  const float* beta, size_t rows, size_t dim, float eps) {
  const float inv_dim = 1.0f / static_cast<float>(dim);
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * dim;
    const float* res = residual + r * residual_stride;
    AddInPlace(res, row, dim);
    const float mean = Sum(row, dim) * inv_dim;
    // Two passes (mean, then squared deviations) rather than E[x^2] - mean^2: no cancellation
    // for rows with a large mean.
    V4 acc = {};
    size_t i = 0;
    for (; i + 4 <= dim; i += 4) {
      const V4 c = LoadV4(row + i) - mean;
      acc += c * c;
    }
    float var = SumV4(acc);
    for (; i < dim; ++i) var += (row[i] - mean) * (row[i] - mean);
    var *= inv_dim;
    const float rstd = 1.0f / std::sqrt(var + eps);
    // (x * rstd - mean * rstd) * gamma + beta: the order torch's CPU kernel uses.
    const float shift = -rstd * mean;
    size_t j = 0;
    for (; j + 4 <= dim; j += 4) {
      StoreV4(row + j, (LoadV4(row + j) * rstd + shift) * LoadV4(gamma + j) + LoadV4(beta + j));
    }
    for (; j < dim; ++j) row[j] = (row[j] * rstd + shift) * gamma[j] + beta[j];
  }
}

}  // namespace headwise::kernels
