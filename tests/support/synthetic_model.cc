#include "tests/support/synthetic_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "format/model_writer.h"
#include "format/weight_format.h"

namespace headwise::testing {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// offset and scale of one tensor under kScaledUniform.
void UniformRange(const SyntheticOptions& o, const ExpectedTensor& e, float* offset,
                  float* scale) {
  const bool is_norm = e.name.find("layer_norm") != std::string::npos;
  const bool is_embedding = e.name.find("shared") != std::string::npos ||
                            e.name.find("embed_tokens") != std::string::npos ||
                            e.name == "lm_head.weight";
  const bool is_matrix = e.shape.size() == 2 && e.name != "final_logits_bias";
  *offset = 0.0f;
  *scale = o.vector_scale;
  if (is_norm) {
    const bool gain = EndsWith(e.name, ".weight");
    *offset = gain ? 1.0f : 0.0f;
    *scale = gain ? o.norm_gain_scale : o.norm_bias_scale;
  } else if (is_embedding && o.embedding_scale != 0.0f) {
    *scale = o.embedding_scale;
  } else if (is_matrix) {
    *scale = 1.5f / std::sqrt(static_cast<float>(e.shape[1]));
  }
}

}  // namespace

float FixtureValue(size_t tensor_index, size_t i) {
  return static_cast<float>(tensor_index) * 1000.0f + static_cast<float>(i) * 0.5f;
}

std::vector<std::vector<uint32_t>> FirstHeads(const SyntheticOptions& o, uint32_t encoder_self,
                                              uint32_t decoder_self, uint32_t decoder_cross) {
  std::vector<std::vector<uint32_t>> kept;
  for (const auto& [layers, k] : {std::pair<uint32_t, uint32_t>{o.encoder_layers, encoder_self},
                                  {o.decoder_layers, decoder_self},
                                  {o.decoder_layers, decoder_cross}}) {
    for (uint32_t l = 0; l < layers; ++l) {
      std::vector<uint32_t> heads;
      for (uint32_t h = 0; h < k && h < o.heads; ++h) heads.push_back(h);
      kept.push_back(std::move(heads));
    }
  }
  return kept;
}

ModelSpec MakeSyntheticSpec(const SyntheticOptions& o) {
  ModelSpec spec;
  ModelConfig& c = spec.config;
  c.d_model = o.d_model;
  c.encoder_layers = o.encoder_layers;
  c.decoder_layers = o.decoder_layers;
  c.encoder_attention_heads = o.heads;
  c.decoder_attention_heads = o.heads;
  c.encoder_ffn_dim = o.encoder_ffn;
  c.decoder_ffn_dim = o.decoder_ffn;
  c.vocab_size = o.vocab;
  c.share_encoder_decoder_embeddings = o.share_embeddings;
  c.tie_word_embeddings = o.tie_embeddings;
  c.activation = o.activation;
  c.max_position_embeddings = o.max_positions;
  c.pad_token_id = o.pad;
  c.eos_token_id = o.eos;
  c.decoder_start_token_id = o.start;
  c.unk_token_id = o.unk;
  c.scale_embedding = o.scale_embedding;

  size_t index = 0;
  for (AttentionKind kind : {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf,
                             AttentionKind::kDecoderCross}) {
    const uint32_t layers = kind == AttentionKind::kEncoderSelf ? c.encoder_layers : c.decoder_layers;
    for (uint32_t l = 0; l < layers; ++l, ++index) {
      BlockLayout b;
      b.kind = kind;
      b.layer = l;
      b.head_dim = o.d_model / o.heads;
      b.original_num_heads = o.heads;
      if (index < o.kept.size()) {
        b.kept_heads = o.kept[index];
      } else {
        for (uint32_t h = 0; h < o.heads; ++h) b.kept_heads.push_back(h);
      }
      b.num_heads = static_cast<uint32_t>(b.kept_heads.size());
      spec.blocks.push_back(b);
      if (o.gates) {
        std::vector<float> gate = {1.5f, -2.0f, 0.25f};
        gate.resize(o.heads, static_cast<float>(index));
        spec.gate_log_alpha.push_back(std::move(gate));
      }
    }
  }

  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  const std::vector<ExpectedTensor> expected = ExpectedTensors(spec.config, spec.blocks);
  for (size_t t = 0; t < expected.size(); ++t) {
    const ExpectedTensor& e = expected[t];
    TensorSpec ts{e.name, e.shape, {}};
    size_t n = 1;
    for (uint32_t d : e.shape) n *= d;
    ts.data.resize(n);
    switch (o.values) {
      case WeightValues::kScaledUniform: {
        float offset = 0.0f, scale = 0.0f;
        UniformRange(o, e, &offset, &scale);
        for (float& v : ts.data) v = offset + scale * uniform(rng);
        break;
      }
      case WeightValues::kNormal: {
        const bool gain = e.name.find("layer_norm.weight") != std::string::npos;
        for (float& v : ts.data) v = (gain ? 1.0f : 0.0f) + normal(rng);
        break;
      }
      case WeightValues::kFixture:
        for (size_t i = 0; i < n; ++i) ts.data[i] = FixtureValue(t, i);
        break;
    }
    if (e.name == "final_logits_bias") ts.data[static_cast<size_t>(o.eos)] += o.eos_bias;
    spec.tensors.push_back(std::move(ts));
  }
  ApplyWeightFormat(o.weights, &spec);
  return spec;
}

ShortlistSpec MakeSyntheticShortlist(uint32_t vocab, uint32_t frequent, uint32_t per_source,
                                     uint32_t seed) {
  std::mt19937 rng(seed);
  // k distinct ids of [0, vocab), ascending (a partial Fisher-Yates shuffle of the identity;
  // the swaps are undone afterwards, so each draw costs O(k), not O(vocab)).
  std::vector<uint32_t> all(vocab);
  for (uint32_t i = 0; i < vocab; ++i) all[i] = i;
  std::vector<uint32_t> swapped;
  const auto draw = [&](uint32_t k) {
    k = std::min(k, vocab);
    swapped.clear();
    for (uint32_t i = 0; i < k; ++i) {
      std::uniform_int_distribution<uint32_t> pick(i, vocab - 1);
      const uint32_t j = pick(rng);
      std::swap(all[i], all[j]);
      swapped.push_back(j);
    }
    std::vector<uint32_t> ids(all.begin(), all.begin() + k);
    for (uint32_t i = k; i-- > 0;) std::swap(all[i], all[swapped[i]]);
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  ShortlistSpec s;
  s.frequent = draw(frequent);
  s.offsets.push_back(0);
  for (uint32_t source = 0; source < vocab; ++source) {
    const std::vector<uint32_t> list = draw(per_source);
    s.targets.insert(s.targets.end(), list.begin(), list.end());
    s.offsets.push_back(static_cast<uint32_t>(s.targets.size()));
  }
  s.description = "synthetic: " + std::to_string(frequent) + " frequent, " +
                  std::to_string(per_source) + " per source id, seed " + std::to_string(seed);
  return s;
}

AlignedBytes::AlignedBytes(const std::vector<uint8_t>& bytes) : size_(bytes.size()) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes.empty() ? 64 : bytes.size()) != 0) std::abort();
  data_.reset(static_cast<uint8_t*>(p));
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
}

Result<std::unique_ptr<LoadedModel>> LoadSpec(ModelSpec spec) {
  auto m = std::make_unique<LoadedModel>();
  m->spec = std::move(spec);
  HW_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, SerializeModel(m->spec));
  m->image = std::make_unique<AlignedBytes>(bytes);
  HW_ASSIGN_OR_RETURN(m->model, Model::LoadFromMemory(m->image->data(), m->image->size()));
  return m;
}

std::vector<int32_t> RandomSource(uint32_t vocab, int32_t pad, int32_t eos, size_t length,
                                  uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(2, static_cast<int32_t>(vocab) - 1);
  std::vector<int32_t> ids;
  while (ids.size() + 1 < length) {
    const int32_t v = id(rng);
    if (v != pad && v != eos) ids.push_back(v);
  }
  ids.push_back(eos);
  return ids;
}

}  // namespace headwise::testing
