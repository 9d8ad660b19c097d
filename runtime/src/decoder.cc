#include "decoder.h"

#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "layer_common.h"
#include "parallel.h"

namespace headwise {
namespace {

// Self-attention of one layer: project [q | k | v], append k and v to each row's cache slot,
// attend over the slot's positions [0, step].
Status SelfAttention(Translator::Impl& t, size_t l, size_t rows, size_t step) {
  Buffers& b = t.buf;
  const AttentionWeights& a = t.m->decoder_layers[l].self_attn;
  const size_t inner = a.inner();
  if (inner == 0) return Status::Ok();
  HW_RETURN_IF_ERROR(t.decoder_ops[l].self_qkv.Run(rows, b.dec_y, b.dec_qkv, t.pool.get()));
  const size_t T = static_cast<size_t>(t.limits.max_target_tokens);
  const size_t hd = a.head_dim;
  const kernels::AttentionShape shape{a.num_heads, hd, AttentionScale(a.head_dim), T * hd};
  for (size_t r = 0; r < rows; ++r) {
    const size_t slot = static_cast<size_t>(b.row_slot[r]);
    const float* qkv = b.dec_qkv + r * 3 * inner;
    for (size_t h = 0; h < a.num_heads; ++h) {
      const size_t at = slot * T * inner + h * T * hd + step * hd;
      std::memcpy(b.self_k[l] + at, qkv + inner + h * hd, hd * sizeof(float));
      std::memcpy(b.self_v[l] + at, qkv + 2 * inner + h * hd, hd * sizeof(float));
    }
  }
  ParallelFor(t.pool.get(), a.num_heads, 2 * rows * (step + 1) * inner, [&](size_t h) {
    float* scores = b.scores + h * b.scores_stride;
    for (size_t r = 0; r < rows; ++r) {
      const size_t slot = static_cast<size_t>(b.row_slot[r]);
      kernels::AttentionHead(h, b.dec_qkv + r * 3 * inner, 3 * inner, 1, b.self_k[l] + slot * T * inner,
                             hd, b.self_v[l] + slot * T * inner, hd, step + 1, shape,
                             b.dec_ctx + r * inner, inner, scores);
    }
  });
  return Status::Ok();
}

// Cross-attention of one layer over the keys and values RunEncoder left in buf.cross_k/v.
Status CrossAttention(Translator::Impl& t, size_t l, size_t rows) {
  Buffers& b = t.buf;
  const AttentionWeights& a = t.m->decoder_layers[l].cross_attn;
  const size_t inner = a.inner();
  if (inner == 0) return Status::Ok();
  HW_RETURN_IF_ERROR(t.decoder_ops[l].cross_q.Run(rows, b.dec_y, b.dec_qkv, t.pool.get()));
  const size_t N = static_cast<size_t>(t.limits.max_batch) * static_cast<size_t>(t.limits.max_source_tokens);
  const size_t hd = a.head_dim;
  const kernels::AttentionShape shape{a.num_heads, hd, AttentionScale(a.head_dim), N * hd};
  size_t work = 0;
  for (size_t r = 0; r < rows; ++r) work += 2 * static_cast<size_t>(b.src_len[b.row_sentence[r]]) * inner;
  ParallelFor(t.pool.get(), a.num_heads, work, [&](size_t h) {
    float* scores = b.scores + h * b.scores_stride;
    for (size_t r = 0; r < rows; ++r) {
      const size_t s = static_cast<size_t>(b.row_sentence[r]);
      const size_t off = static_cast<size_t>(b.src_offset[s]) * hd;
      kernels::AttentionHead(h, b.dec_qkv + r * inner, inner, 1, b.cross_k[l] + off, hd,
                             b.cross_v[l] + off, hd, static_cast<size_t>(b.src_len[s]), shape,
                             b.dec_ctx + r * inner, inner, scores);
    }
  });
  return Status::Ok();
}

}  // namespace

Status DecoderStep(Translator::Impl& t, size_t rows, size_t step, float* logits) {
  const ModelDims& dims = t.m->dims;
  Buffers& b = t.buf;
  const size_t d = static_cast<size_t>(dims.d_model);
  const float scale = dims.scale_embedding ? std::sqrt(static_cast<float>(d)) : 1.0f;
  EmbedTokens(t.m->decoder_embed, b.row_token, rows, d, scale, b.positions + step * d, 0,
              b.dec_y);

  for (size_t l = 0; l < t.decoder_ops.size(); ++l) {
    const DecoderLayerWeights& w = t.m->decoder_layers[l];
    const DecoderLayerOps& ops = t.decoder_ops[l];
    HW_RETURN_IF_ERROR(SelfAttention(t, l, rows, step));
    HW_RETURN_IF_ERROR(FinishAttention(t, ops.self_out, w.self_attn, w.self_attn_norm, rows,
                                       b.dec_ctx, b.dec_tmp, b.dec_y));
    HW_RETURN_IF_ERROR(CrossAttention(t, l, rows));
    HW_RETURN_IF_ERROR(FinishAttention(t, ops.cross_out, w.cross_attn, w.cross_attn_norm, rows,
                                       b.dec_ctx, b.dec_tmp, b.dec_y));
    HW_RETURN_IF_ERROR(
        RunFeedForward(t, ops.fc1, ops.fc2, w.final_norm, rows, b.dec_y, b.dec_ffn, b.dec_tmp));
  }
  return t.lm_head.Run(rows, b.dec_y, logits, t.pool.get());
}

void CopyCacheSlot(Translator::Impl& t, size_t from, size_t to, size_t length) {
  const size_t T = static_cast<size_t>(t.limits.max_target_tokens);
  for (size_t l = 0; l < t.decoder_ops.size(); ++l) {
    const AttentionWeights& a = t.m->decoder_layers[l].self_attn;
    const size_t inner = a.inner(), hd = a.head_dim;
    const size_t bytes = length * hd * sizeof(float);
    for (size_t h = 0; h < a.num_heads; ++h) {
      const size_t head = h * T * hd;
      std::memcpy(t.buf.self_k[l] + to * T * inner + head, t.buf.self_k[l] + from * T * inner + head, bytes);
      std::memcpy(t.buf.self_v[l] + to * T * inner + head, t.buf.self_v[l] + from * T * inner + head, bytes);
    }
  }
}

}  // namespace headwise
