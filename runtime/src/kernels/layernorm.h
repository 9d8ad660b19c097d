// runtime/src/kernels/layernorm.h: the residual add + LayerNorm that closes every sub-layer of
// a post-LayerNorm (Marian) Transformer.
#ifndef HEADWISE_RUNTIME_KERNELS_LAYERNORM_H_
#define HEADWISE_RUNTIME_KERNELS_LAYERNORM_H_

#include <cstddef>

namespace headwise::kernels {

// For each row r < rows:  x[r] = LayerNorm(x[r] + residual[r]) * gamma + beta  over `dim`
// values, with the biased variance and `eps` as torch.nn.LayerNorm. Rows are `dim` apart in x
// and `residual_stride` apart in residual; residual_stride 0 adds the same row to every row
// (the output of a zero-head attention block is its out_proj bias). In place; no allocation.
void AddLayerNorm(float* x, const float* residual, size_t residual_stride, const float* gamma,
                  const float* beta, size_t rows, size_t dim, float eps);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_LAYERNORM_H_
