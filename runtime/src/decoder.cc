#include "decoder.h"

#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "layer_common.h"
#include "parallel.h"
#include "shortlist.h"

namespace headwise {

// Self-attention of one layer: project [q | k | v], append k and v to each row's cache slot,
// attend over the slot's history, positions [0, step] (kv_block says in which slots they lie).
Status Decoder::SelfAttention(size_t l, size_t rows, size_t step) const {
  const DecoderBuffers& b = buf_;
  const AttentionWeights& a = net_.model->decoder_layers[l].self_attn;
  const size_t inner = a.inner();
  if (inner == 0) return Status::Ok();
  {
    const OpTimer timer(net_.profile, OpKind::kProjection);
    HW_RETURN_IF_ERROR(net_.decoder[l].self_qkv.Run(rows, b.y, b.qkv, net_.threads()));
  }
  const OpTimer timer(net_.profile, OpKind::kAttention);
  const size_t T = b.max_length;
  const size_t hd = a.head_dim;
  const kernels::AttentionShape shape{a.num_heads, hd, AttentionScale(a.head_dim), T * hd};
  for (size_t r = 0; r < rows; ++r) {
    const size_t slot = static_cast<size_t>(b.rows.slot[r]);
    const float* qkv = b.qkv + r * 3 * inner;
    b.kv_block[slot * T + step] = static_cast<int32_t>(slot);
    for (size_t h = 0; h < a.num_heads; ++h) {
      const size_t at = slot * T * inner + h * T * hd + step * hd;
      std::memcpy(b.self_k[l] + at, qkv + inner + h * hd, hd * sizeof(float));
      std::memcpy(b.self_v[l] + at, qkv + 2 * inner + h * hd, hd * sizeof(float));
    }
  }
  ParallelFor(net_.threads(), a.num_heads, AttentionWork(rows * (step + 1), inner), [&](size_t h) {
    float* scores = b.tables.scores + h * b.tables.scores_stride;
    for (size_t r = 0; r < rows; ++r) {
      const size_t slot = static_cast<size_t>(b.rows.slot[r]);
      // Head h's keys and values of the next row (step + 1 positions of head_dim floats, each
      // in the slot kv_block names) are requested while this row's are computed: they come from
      // memory (the step's weights pass through the cache between two reads of them, and the
      // cache of a batch of beams is megabytes), in runs too short for the hardware prefetcher.
      // Written out here, not as a helper: GCC 12 takes a function that only prefetches for one
      // without side effects and deletes its calls.
      if (r + 1 < rows) {
        const int32_t* block = b.kv_block + static_cast<size_t>(b.rows.slot[r + 1]) * T;
        for (size_t p = 0; p <= step; ++p) {
          const size_t at = static_cast<size_t>(block[p]) * T * inner + h * T * hd + p * hd;
          for (size_t e = 0; e < hd; e += 64 / sizeof(float)) {
            __builtin_prefetch(b.self_k[l] + at + e);
            __builtin_prefetch(b.self_v[l] + at + e);
          }
        }
      }
      kernels::AttentionHead(h, b.qkv + r * 3 * inner, 3 * inner, 1, b.self_k[l], hd, b.self_v[l],
                             hd, step + 1, shape, b.ctx + r * inner, inner, scores,
                             b.kv_block + slot * T, T * inner);
    }
  });
  return Status::Ok();
}

// Cross-attention of one layer over the keys and values RunEncoder left in buf.cross.
Status Decoder::CrossAttention(size_t l, size_t rows) const {
  const DecoderBuffers& b = buf_;
  const AttentionWeights& a = net_.model->decoder_layers[l].cross_attn;
  const size_t inner = a.inner();
  if (inner == 0) return Status::Ok();
  {
    const OpTimer timer(net_.profile, OpKind::kProjection);
    HW_RETURN_IF_ERROR(net_.decoder[l].cross_q.Run(rows, b.y, b.qkv, net_.threads()));
  }
  const OpTimer timer(net_.profile, OpKind::kAttention);
  const size_t N = b.cross.rows;
  const size_t hd = a.head_dim;
  const kernels::AttentionShape shape{a.num_heads, hd, AttentionScale(a.head_dim), N * hd};
  size_t pairs = 0;
  for (size_t r = 0; r < rows; ++r) pairs += static_cast<size_t>(b.source.length[b.rows.sentence[r]]);
  ParallelFor(net_.threads(), a.num_heads, AttentionWork(pairs, inner), [&](size_t h) {
    float* scores = b.tables.scores + h * b.tables.scores_stride;
    for (size_t r = 0; r < rows; ++r) {
      const size_t s = static_cast<size_t>(b.rows.sentence[r]);
      const size_t off = static_cast<size_t>(b.source.offset[s]) * hd;
      kernels::AttentionHead(h, b.qkv + r * inner, inner, 1, b.cross.k[l] + off, hd,
                             b.cross.v[l] + off, hd, static_cast<size_t>(b.source.length[s]),
                             shape, b.ctx + r * inner, inner, scores);
    }
  });
  return Status::Ok();
}

Status Decoder::Step(size_t rows, size_t step, float* logits) const {
  const ModelConfig& dims = net_.config();
  const DecoderBuffers& b = buf_;
  if (net_.profile != nullptr) {
    ++net_.profile->steps;
    net_.profile->step_rows += rows;
  }
  const size_t d = static_cast<size_t>(dims.d_model);
  const float scale = dims.scale_embedding ? std::sqrt(static_cast<float>(d)) : 1.0f;
  EmbedTokens(net_.model->decoder_embed, b.rows.token, rows, d, scale,
              b.tables.positions + step * d, 0, b.y, net_.decoder_embed_packed);

  for (size_t l = 0; l < net_.decoder.size(); ++l) {
    const DecoderLayerWeights& w = net_.model->decoder_layers[l];
    const DecoderLayerOps& ops = net_.decoder[l];
    HW_RETURN_IF_ERROR(SelfAttention(l, rows, step));
    {
      const OpTimer timer(net_.profile, OpKind::kProjection);
      HW_RETURN_IF_ERROR(FinishAttention(net_, ops.self_out, w.self_attn, w.self_attn_norm, rows,
                                         b.ctx, b.tmp, b.y));
    }
    HW_RETURN_IF_ERROR(CrossAttention(l, rows));
    {
      const OpTimer timer(net_.profile, OpKind::kProjection);
      HW_RETURN_IF_ERROR(FinishAttention(net_, ops.cross_out, w.cross_attn, w.cross_attn_norm,
                                         rows, b.ctx, b.tmp, b.y));
    }
    const OpTimer timer(net_.profile, OpKind::kFeedForward);
    HW_RETURN_IF_ERROR(RunFeedForward(net_, ops.fc1, ops.fc2, w.final_norm, rows, b.y, b.ffn, b.tmp));
  }
  const OpTimer timer(net_.profile, OpKind::kOutputLayer);
  if (shortlist_ != nullptr) return shortlist_->Run(rows, b.y, b.rows.sentence, logits, net_.threads());
  return net_.lm_head.Run(rows, b.y, logits, net_.threads());
}

void Decoder::ShareCacheSlot(size_t from, size_t to, size_t length) const {
  const OpTimer timer(net_.profile, OpKind::kCacheCopy);
  const size_t T = buf_.max_length;
  std::memcpy(buf_.kv_block + to * T, buf_.kv_block + from * T, length * sizeof(int32_t));
}

}  // namespace headwise
