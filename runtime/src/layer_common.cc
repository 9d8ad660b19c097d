#include "layer_common.h"

#include "kernels/activation.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"

namespace headwise {

void EmbedTokens(const WeightView& table, const int32_t* ids, size_t rows, size_t dim,
                 float scale, const float* positions, size_t position_stride, float* out,
                 const uint8_t* packed) {
  switch (table.dtype) {
    case DType::kF32:
      kernels::EmbedTokens(table.f32(), ids, rows, dim, scale, positions, position_stride, out);
      return;
    case DType::kF16:
      kernels::EmbedTokensF16(table.f16(), ids, rows, dim, scale, positions, position_stride, out);
      return;
    case DType::kI8:
      if (packed != nullptr) {
        kernels::EmbedTokensI8Packed(packed, table.scale, ids, rows, dim, scale, positions,
                                     position_stride, out);
        return;
      }
      kernels::EmbedTokensI8(table.i8(), table.scale, ids, rows, dim, scale, positions,
                             position_stride, out);
      return;
    default:
      EmbedTokensWidened(table, ids, rows, dim, scale, positions, position_stride, out);
      return;
  }
}

void EmbedTokensWidened(const WeightView& table, const int32_t* ids, size_t rows, size_t dim,
                        float scale, const float* positions, size_t position_stride, float* out) {
  for (size_t r = 0; r < rows; ++r) {
    float* o = out + r * dim;
    const float* pos = positions + r * position_stride;
    table.WidenRow(static_cast<size_t>(ids[r]), o);
    for (size_t j = 0; j < dim; ++j) o[j] = o[j] * scale + pos[j];
  }
}

Status RunFeedForward(const Network& net, const FullyConnected& fc1,
                      const FullyConnected& fc2, const LayerNormWeights& norm,
                      size_t rows, float* x, float* hidden, float* tmp) {
  const ModelConfig& dims = net.config();
  const size_t d = static_cast<size_t>(dims.d_model);
  HW_RETURN_IF_ERROR(fc1.Run(rows, x, hidden, net.threads()));
  const size_t n = rows * fc1.output_channels();
  if (dims.activation != Activation::kRelu) {  // relu is fused into fc1's output clamp
    kernels::ApplyActivation(dims.activation, hidden, n);
  }
  HW_RETURN_IF_ERROR(fc2.Run(rows, hidden, tmp, net.threads()));
  kernels::AddLayerNorm(x, tmp, d, norm.gamma.f32(), norm.beta.f32(), rows, d, dims.layer_norm_eps);
  return Status::Ok();
}

Status FinishAttention(const Network& net, const FullyConnected& out,
                       const AttentionWeights& w, const LayerNormWeights& norm, size_t rows,
                       const float* ctx, float* tmp, float* x) {
  const ModelConfig& dims = net.config();
  const size_t d = static_cast<size_t>(dims.d_model);
  if (w.num_heads == 0) {
    kernels::AddLayerNorm(x, w.out_b.f32(), 0, norm.gamma.f32(), norm.beta.f32(), rows, d,
                          dims.layer_norm_eps);
    return Status::Ok();
  }
  HW_RETURN_IF_ERROR(out.Run(rows, ctx, tmp, net.threads()));
  kernels::AddLayerNorm(x, tmp, d, norm.gamma.f32(), norm.beta.f32(), rows, d, dims.layer_norm_eps);
  return Status::Ok();
}

}  // namespace headwise
