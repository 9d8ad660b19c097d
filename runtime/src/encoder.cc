#include "encoder.h"

#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "layer_common.h"
#include "parallel.h"

namespace headwise {

Status RunEncoder(const Network& net, const EncoderBuffers& b, const TokenSpan* sources,
                  size_t batch) {
  const ScopedSeconds total(net.profile != nullptr ? &net.profile->encoder_seconds : nullptr);
  const ModelConfig& dims = net.config();
  const Model::Impl& m = *net.model;
  const size_t d = static_cast<size_t>(dims.d_model);
  const float scale = dims.scale_embedding ? std::sqrt(static_cast<float>(d)) : 1.0f;
  const SharedTables& tables = b.tables;

  size_t rows = 0;
  for (size_t s = 0; s < batch; ++s) {
    b.source.offset[s] = static_cast<int32_t>(rows);
    b.source.length[s] = static_cast<int32_t>(sources[s].size);
    EmbedTokens(m.encoder_embed, sources[s].ids, sources[s].size, d, scale, tables.positions, d,
                b.x + rows * d, net.encoder_embed_packed);
    rows += sources[s].size;
  }

  for (size_t l = 0; l < net.encoder.size(); ++l) {
    const EncoderLayerWeights& w = m.encoder_layers[l];
    const EncoderLayerOps& ops = net.encoder[l];
    const AttentionWeights& a = w.self_attn;
    const size_t inner = a.inner();
    if (inner > 0) {
      {
        const OpTimer timer(net.profile, OpKind::kProjection);
        HW_RETURN_IF_ERROR(ops.qkv.Run(rows, b.x, b.qkv, net.threads()));
      }
      const OpTimer timer(net.profile, OpKind::kAttention);
      const kernels::AttentionShape shape{a.num_heads, a.head_dim, AttentionScale(a.head_dim),
                                          a.head_dim};
      size_t pairs = 0;
      for (size_t s = 0; s < batch; ++s) {
        pairs += static_cast<size_t>(b.source.length[s]) * static_cast<size_t>(b.source.length[s]);
      }
      ParallelFor(net.threads(), a.num_heads, AttentionWork(pairs, inner), [&](size_t h) {
        float* scores = tables.scores + h * tables.scores_stride;
        for (size_t s = 0; s < batch; ++s) {
          const size_t off = static_cast<size_t>(b.source.offset[s]);
          const size_t len = static_cast<size_t>(b.source.length[s]);
          const float* qkv = b.qkv + off * 3 * inner;
          kernels::AttentionHead(h, qkv, 3 * inner, len, qkv + inner, 3 * inner, qkv + 2 * inner,
                                 3 * inner, len, shape, b.ctx + off * inner, inner, scores);
        }
      });
    }
    {
      const OpTimer timer(net.profile, OpKind::kProjection);
      HW_RETURN_IF_ERROR(FinishAttention(net, ops.out, a, w.self_attn_norm, rows, b.ctx, b.tmp, b.x));
    }
    const OpTimer timer(net.profile, OpKind::kFeedForward);
    HW_RETURN_IF_ERROR(RunFeedForward(net, ops.fc1, ops.fc2, w.final_norm, rows, b.x, b.ffn, b.tmp));
  }

  const size_t N = b.cross.rows;
  for (size_t l = 0; l < net.decoder.size(); ++l) {
    const AttentionWeights& a = m.decoder_layers[l].cross_attn;
    const size_t inner = a.inner(), hd = a.head_dim;
    if (inner == 0) continue;
    const OpTimer timer(net.profile, OpKind::kProjection);  // the product and its reordering
    HW_RETURN_IF_ERROR(net.decoder[l].cross_kv.Run(rows, b.x, b.kv, net.threads()));
    // [row][k heads | v heads] -> [head][row] for K and for V.
    for (size_t r = 0; r < rows; ++r) {
      const float* kv = b.kv + r * 2 * inner;
      for (size_t h = 0; h < a.num_heads; ++h) {
        std::memcpy(b.cross.k[l] + (h * N + r) * hd, kv + h * hd, hd * sizeof(float));
        std::memcpy(b.cross.v[l] + (h * N + r) * hd, kv + inner + h * hd, hd * sizeof(float));
      }
    }
  }
  return Status::Ok();
}

}  // namespace headwise
