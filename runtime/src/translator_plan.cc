#include "translator_plan.h"

#include <algorithm>
#include <utility>

namespace headwise {

namespace {

bool Is(const WeightView& w, DType t) { return w.dtype == t; }

bool Is(const AttentionWeights& a, DType t) {
  return Is(a.q_w, t) || Is(a.k_w, t) || Is(a.v_w, t) || Is(a.out_w, t);
}

// Any operator matrix of type t (a file may mix dtypes).
bool HasMatrices(const Model::Impl& model, DType t) {
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

bool HasF16Matrices(const Model::Impl& model) { return HasMatrices(model, DType::kF16); }
bool HasInt8Weights(const Model::Impl& model) { return HasMatrices(model, DType::kI8); }

void LayoutBuffers(const Model::Impl& model, const TranslatorLimits& limits,
                   size_t hyps_per_sentence, bool f16_compute, ArenaCarver& c,
                   TranslatorBuffers* buf, bool with_window) {
  const ModelConfig& dims = model.config;
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
  EncoderBuffers& enc = buf->encoder;
  DecoderBuffers& dec = buf->decoder;
  SearchBuffers& search = buf->search;

  // Live for the whole Translator or a whole call.
  SharedTables tables;
  buf->positions = c.Take<float>({P, d});
  tables.positions = buf->positions;
  tables.scores = c.Take<float>({heads, P});
  tables.scores_stride = P;
  const size_t layers = model.decoder_layers.size();
  CrossKv cross;
  cross.k.assign(layers, nullptr);
  cross.v.assign(layers, nullptr);
  cross.rows = N;
  dec.self_k.assign(layers, nullptr);
  dec.self_v.assign(layers, nullptr);
  dec.max_length = T;
  dec.kv_block = c.Take<int32_t>({R, T});
  size_t cross_max = 0;
  for (size_t l = 0; l < layers; ++l) {
    const size_t self_inner = model.decoder_layers[l].self_attn.inner();
    const size_t cross_inner = model.decoder_layers[l].cross_attn.inner();
    cross_max = std::max(cross_max, cross_inner);
    if (cross_inner > 0) {
      cross.k[l] = c.Take<float>({N, cross_inner});
      cross.v[l] = c.Take<float>({N, cross_inner});
    }
    if (self_inner > 0) {
      dec.self_k[l] = c.Take<float>({R, T, self_inner});
      dec.self_v[l] = c.Take<float>({R, T, self_inner});
    }
  }
  search.logits = c.Take<float>({R, V});
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
    // Every operator's input and output rows (network.cc creates them): the encoder's and
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
  SourceRows source;
  source.offset = c.Take<int32_t>({B});
  source.length = c.Take<int32_t>({B});
  StepRows rows;
  rows.token = c.Take<int32_t>({R});
  rows.slot = c.Take<int32_t>({R});
  rows.sentence = c.Take<int32_t>({R});
  search.slot_ids = c.Take<int32_t>({R, T});
  search.slot_score = c.Take<float>({R});
  search.live_slot = c.Take<int32_t>({B, K});
  search.live_count = c.Take<int32_t>({B});
  search.done = c.Take<uint8_t>({B});
  search.cand_value = c.Take<float>({2 * K});
  search.cand_index = c.Take<int32_t>({2 * K});
  search.next_parent = c.Take<int32_t>({K});
  search.next_token = c.Take<int32_t>({K});
  search.next_score = c.Take<float>({K});
  search.next_slot = c.Take<int32_t>({K});
  search.slot_claimed = c.Take<uint8_t>({K});
  search.sample_key = c.Take<uint64_t>({B});
  search.sample_order = c.Take<int32_t>({V});
  search.sample_weight = c.Take<double>({V});
  HypothesisStore& hyps = search.hyps;
  hyps.records = c.Take<HypothesisRecord>({B, H});
  hyps.ids = c.Take<int32_t>({B, H, T});
  hyps.stored = c.Take<int32_t>({B});
  hyps.order = c.Take<int32_t>({B, H});
  hyps.per_sentence = H;
  hyps.max_ids = T;
  search.vocab = V;
  search.max_beam = K;
  search.max_length = T;
  search.pad_id = dims.pad_token_id;
  search.eos_id = dims.eos_token_id;
  search.decoder_start_id = dims.decoder_start_token_id;

  if (ShortlistEnabled(model, limits)) LayoutShortlist(model, limits, c, &buf->shortlist);

  // Phase scratch: the encoder's and the decoder's share the same bytes.
  const size_t phase = c.Mark();
  enc.x = c.Take<float>({N, d});
  enc.qkv = c.Take<float>({N, 3 * enc_inner});
  enc.ctx = c.Take<float>({N, enc_inner});
  enc.tmp = c.Take<float>({N, d});
  enc.ffn = c.Take<float>({N, static_cast<size_t>(dims.encoder_ffn_dim)});
  enc.kv = c.Take<float>({N, 2 * cross_max});
  const size_t encoder_end = c.Mark();
  c.Rewind(phase);
  dec.y = c.Take<float>({R, d});
  dec.qkv = c.Take<float>({R, 3 * dec_inner});
  dec.ctx = c.Take<float>({R, dec_inner});
  dec.tmp = c.Take<float>({R, d});
  dec.ffn = c.Take<float>({R, static_cast<size_t>(dims.decoder_ffn_dim)});
  c.Rewind(std::max(encoder_end, c.Mark()));
  if (with_window) LayoutWindowBuffers(limits, c, &buf->window);

  // What passes between the stages: the encoder writes the source layout and the cross K/V
  // the decoder reads; the search writes the step rows the decoder reads.
  enc.tables = tables;
  enc.source = source;
  enc.cross = cross;
  dec.tables = tables;
  dec.source = source;
  dec.cross = std::move(cross);
  dec.rows = rows;
}

}  // namespace headwise
