#include "encoder.h"

#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "layer_common.h"
#include "parallel.h"

namespace headwise {

Status RunEncoder(Translator::Impl& t, const TokenSpan* sources, size_t batch) {
  const ModelDims& dims = t.m->dims;
  Buffers& b = t.buf;
  const size_t d = static_cast<size_t>(dims.d_model);
  const float scale = dims.scale_embedding ? std::sqrt(static_cast<float>(d)) : 1.0f;

  size_t rows = 0;
  for (size_t s = 0; s < batch; ++s) {
    b.src_offset[s] = static_cast<int32_t>(rows);
    b.src_len[s] = static_cast<int32_t>(sources[s].size);
    EmbedTokens(t.m->encoder_embed, sources[s].ids, sources[s].size, d, scale, b.positions, d,
                b.enc_x + rows * d);
    rows += sources[s].size;
  }

  for (size_t l = 0; l < t.encoder_ops.size(); ++l) {
    const EncoderLayerWeights& w = t.m->encoder_layers[l];
    const EncoderLayerOps& ops = t.encoder_ops[l];
    const AttentionWeights& a = w.self_attn;
    const size_t inner = a.inner();
    if (inner > 0) {
      HW_RETURN_IF_ERROR(ops.qkv.Run(rows, b.enc_x, b.enc_qkv, t.pool.get()));
      const kernels::AttentionShape shape{a.num_heads, a.head_dim, AttentionScale(a.head_dim),
                                          a.head_dim};
      size_t work = 0;
      for (size_t s = 0; s < batch; ++s) work += 2 * static_cast<size_t>(b.src_len[s]) * b.src_len[s] * inner;
      ParallelFor(t.pool.get(), a.num_heads, work, [&](size_t h) {
        float* scores = b.scores + h * b.scores_stride;
        for (size_t s = 0; s < batch; ++s) {
          const size_t off = static_cast<size_t>(b.src_offset[s]);
          const size_t len = static_cast<size_t>(b.src_len[s]);
          const float* qkv = b.enc_qkv + off * 3 * inner;
          kernels::AttentionHead(h, qkv, 3 * inner, len, qkv + inner, 3 * inner, qkv + 2 * inner,
                                 3 * inner, len, shape, b.enc_ctx + off * inner, inner, scores);
        }
      });
    }
    HW_RETURN_IF_ERROR(
        FinishAttention(t, ops.out, a, w.self_attn_norm, rows, b.enc_ctx, b.enc_tmp, b.enc_x));
    HW_RETURN_IF_ERROR(
        RunFeedForward(t, ops.fc1, ops.fc2, w.final_norm, rows, b.enc_x, b.enc_ffn, b.enc_tmp));
  }

  const size_t N = static_cast<size_t>(t.limits.max_batch) * static_cast<size_t>(t.limits.max_source_tokens);
  for (size_t l = 0; l < t.decoder_ops.size(); ++l) {
    const AttentionWeights& a = t.m->decoder_layers[l].cross_attn;
    const size_t inner = a.inner(), hd = a.head_dim;
    if (inner == 0) continue;
    HW_RETURN_IF_ERROR(t.decoder_ops[l].cross_kv.Run(rows, b.enc_x, b.enc_kv, t.pool.get()));
    // [row][k heads | v heads] -> [head][row] for K and for V.
    for (size_t r = 0; r < rows; ++r) {
      const float* kv = b.enc_kv + r * 2 * inner;
      for (size_t h = 0; h < a.num_heads; ++h) {
        std::memcpy(b.cross_k[l] + (h * N + r) * hd, kv + h * hd, hd * sizeof(float));
        std::memcpy(b.cross_v[l] + (h * N + r) * hd, kv + inner + h * hd, hd * sizeof(float));
      }
    }
  }
  return Status::Ok();
}

}  // namespace headwise
