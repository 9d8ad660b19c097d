// runtime/src/layer_common.h: the pieces encoder.cc and decoder.cc share: the feed-forward
// sub-layer and the residual + LayerNorm after an attention block (bias-only when the block
// kept no heads).
#ifndef HEADWISE_RUNTIME_LAYER_COMMON_H_
#define HEADWISE_RUNTIME_LAYER_COMMON_H_

#include <cmath>
#include <cstddef>

#include "network.h"

namespace headwise {

// The query scale head_dim^-0.5 of the source model, computed in double and rounded once as
// the reference's Python float is.
inline float AttentionScale(uint32_t head_dim) {
  return static_cast<float>(std::pow(static_cast<double>(head_dim), -0.5));
}

// kernels::EmbedTokens over a table of any weight type: the kernel of its dtype (F32, F16,
// I8 with row scales; an I8 table's rows from `packed`, its packed copy, when non-null),
// EmbedTokensWidened for a dtype without one.
void EmbedTokens(const WeightView& table, const int32_t* ids, size_t rows, size_t dim,
                 float scale, const float* positions, size_t position_stride, float* out,
                 const uint8_t* packed = nullptr);

// The same through WeightView::WidenRow: out[r] = widened row ids[r] * scale + position.
void EmbedTokensWidened(const WeightView& table, const int32_t* ids, size_t rows, size_t dim,
                        float scale, const float* positions, size_t position_stride, float* out);

// x = LN(x + fc2(act(fc1(x)))) over `rows` rows; `hidden` holds [rows, ffn], `tmp` [rows, d].
Status RunFeedForward(const Network& net, const FullyConnected& fc1,
                      const FullyConnected& fc2, const LayerNormWeights& norm,
                      size_t rows, float* x, float* hidden, float* tmp);

// x = LN(x + attention output). With heads, `out` projects ctx ([rows, I]) into tmp first;
// without, the block's output is its out_proj bias for every row.
Status FinishAttention(const Network& net, const FullyConnected& out,
                       const AttentionWeights& w, const LayerNormWeights& norm, size_t rows,
                       const float* ctx, float* tmp, float* x);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_LAYER_COMMON_H_
