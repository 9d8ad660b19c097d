#include "translator_plan.h"

#include <algorithm>

namespace headwise {

namespace {

bool Is(const WeightView& w, WeightType t) { return w.dtype == t; }

bool Is(const AttentionWeights& a, WeightType t) {
  return Is(a.q_w, t) || Is(a.k_w, t) || Is(a.v_w, t) || Is(a.out_w, t);
}

// Any operator matrix of type t (a file may mix dtypes).
bool HasMatrices(const Model::Impl& model, WeightType t) {
  bool any = Is(model.lm_head, t);
  for (const EncoderLayerWeights& l : model.encoder_layers) {
    any = any || Is(l.self_attn, t) || Is(l.ffn.fc1_w, t) || Is(l.ffn.fc2_w, t);
  }
  for (const DecoderLayerWeights& l : model.decoder_layers) {
    any = any || Is(l.self_attn, t) || Is(l.cross_attn, t) || Is(l.ffn.fc1_w, t) ||
          Is(l.ffn.fc2_w, t);
  }
  return any;
}

}  // namespace

bool HasF16Matrices(const Model::Impl& model) { return HasMatrices(model, WeightType::kF16); }
bool HasInt8Weights(const Model::Impl& model) { return HasMatrices(model, WeightType::kI8); }

void LayoutBuffers(const Model::Impl& model, const TranslatorLimits& limits,
                   size_t hyps_per_sentence, bool f16_compute, ArenaCarver& c, Buffers* buf) {
  const ModelDims& dims = model.dims;
  const size_t B = static_cast<size_t>(limits.max_batch);
  const size_t S = static_cast<size_t>(limits.max_source_tokens);
  const size_t T = static_cast<size_t>(limits.max_target_tokens);
  const size_t K = static_cast<size_t>(limits.max_beam);
  const size_t d = static_cast<size_t>(dims.d_model);
  const size_t V = static_cast<size_t>(dims.vocab_size);
  const size_t H = hyps_per_sentence;
  const size_t R = B * K;  // limits are bounded in Translator::Create, no overflow here
  const size_t N = B * S;
  const size_t P = std::max(S, T);

  size_t enc_inner = 0, dec_inner = 0, heads = 1;
  for (const EncoderLayerWeights& l : model.encoder_layers) {
    enc_inner = std::max<size_t>(enc_inner, l.self_attn.inner());
    heads = std::max<size_t>(heads, l.self_attn.num_heads);
  }
  for (const DecoderLayerWeights& l : model.decoder_layers) {
    dec_inner = std::max<size_t>({dec_inner, l.self_attn.inner(), l.cross_attn.inner()});
    heads = std::max<size_t>({heads, l.self_attn.num_heads, l.cross_attn.num_heads});
  }

  // Live for the whole Translator or a whole call.
  buf->positions = c.Take<float>({P, d});
  buf->scores = c.Take<float>({heads, P});
  buf->scores_stride = P;
  const size_t layers = model.decoder_layers.size();
  buf->cross_k.assign(layers, nullptr);
  buf->cross_v.assign(layers, nullptr);
  buf->self_k.assign(layers, nullptr);
  buf->self_v.assign(layers, nullptr);
  size_t cross_max = 0;
  for (size_t l = 0; l < layers; ++l) {
    const size_t self_inner = model.decoder_layers[l].self_attn.inner();
    const size_t cross_inner = model.decoder_layers[l].cross_attn.inner();
    cross_max = std::max(cross_max, cross_inner);
    if (cross_inner > 0) {
      buf->cross_k[l] = c.Take<float>({N, cross_inner});
      buf->cross_v[l] = c.Take<float>({N, cross_inner});
    }
    if (self_inner > 0) {
      buf->self_k[l] = c.Take<float>({R, T, self_inner});
      buf->self_v[l] = c.Take<float>({R, T, self_inner});
    }
  }
  buf->logits = c.Take<float>({R, V});
  if (HasInt8Weights(model)) {
    const size_t widest = std::max<size_t>({d, static_cast<size_t>(dims.encoder_ffn_dim),
                                            static_cast<size_t>(dims.decoder_ffn_dim), enc_inner,
                                            dec_inner});
    buf->int8.max_rows = std::max(N, R);
    buf->int8.max_cols = widest;
    buf->int8.q = c.Take<int8_t>({buf->int8.max_rows, widest});
    buf->int8.scale = c.Take<float>({buf->int8.max_rows});
  }
  if (f16_compute) {
    // Every operator's input and output rows (translator.cc creates them): the encoder's and
    // cross_kv run on N packed source rows, the decoder's and lm_head on R rows.
    const size_t enc_ffn = static_cast<size_t>(dims.encoder_ffn_dim);
    const size_t dec_ffn = static_cast<size_t>(dims.decoder_ffn_dim);
    const size_t enc_in = std::max({d, enc_inner, enc_ffn});
    const size_t enc_out = std::max({3 * enc_inner, d, enc_ffn, 2 * cross_max});
    const size_t dec_in = std::max({d, dec_inner, dec_ffn});
    const size_t dec_out = std::max({3 * dec_inner, d, dec_ffn, V});
    buf->f16.in_elements = std::max(N * enc_in, R * dec_in);
    buf->f16.out_elements = std::max(N * enc_out, R * dec_out);
    buf->f16.in = c.Take<uint16_t>({buf->f16.in_elements});
    buf->f16.out = c.Take<uint16_t>({buf->f16.out_elements});
  }
  buf->src_offset = c.Take<int32_t>({B});
  buf->src_len = c.Take<int32_t>({B});
  buf->row_token = c.Take<int32_t>({R});
  buf->row_slot = c.Take<int32_t>({R});
  buf->row_sentence = c.Take<int32_t>({R});
  buf->slot_ids = c.Take<int32_t>({R, T});
  buf->slot_score = c.Take<float>({R});
  buf->live_slot = c.Take<int32_t>({B, K});
  buf->live_count = c.Take<int32_t>({B});
  buf->done = c.Take<uint8_t>({B});
  buf->cand_value = c.Take<float>({2 * K});
  buf->cand_index = c.Take<int32_t>({2 * K});
  buf->next_parent = c.Take<int32_t>({K});
  buf->next_token = c.Take<int32_t>({K});
  buf->next_score = c.Take<float>({K});
  buf->next_slot = c.Take<int32_t>({K});
  buf->slot_claimed = c.Take<uint8_t>({K});
  buf->hyp = c.Take<HypothesisRecord>({B, H});
  buf->hyp_ids = c.Take<int32_t>({B, H, T});
  buf->hyp_stored = c.Take<int32_t>({B});
  buf->hyp_order = c.Take<int32_t>({B, H});

  // Phase scratch: the encoder's and the decoder's share the same bytes.
  const size_t phase = c.Mark();
  buf->enc_x = c.Take<float>({N, d});
  buf->enc_qkv = c.Take<float>({N, 3 * enc_inner});
  buf->enc_ctx = c.Take<float>({N, enc_inner});
  buf->enc_tmp = c.Take<float>({N, d});
  buf->enc_ffn = c.Take<float>({N, static_cast<size_t>(dims.encoder_ffn_dim)});
  buf->enc_kv = c.Take<float>({N, 2 * cross_max});
  const size_t encoder_end = c.Mark();
  c.Rewind(phase);
  buf->dec_y = c.Take<float>({R, d});
  buf->dec_qkv = c.Take<float>({R, 3 * dec_inner});
  buf->dec_ctx = c.Take<float>({R, dec_inner});
  buf->dec_tmp = c.Take<float>({R, d});
  buf->dec_ffn = c.Take<float>({R, static_cast<size_t>(dims.decoder_ffn_dim)});
  c.Rewind(std::max(encoder_end, c.Mark()));
}

}  // namespace headwise
