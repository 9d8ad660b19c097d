#include "tests/runtime/test_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

namespace headwise::testing {

ModelSpec MakeSpec(const ModelOptions& o) {
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
  spec.config.activation = o.activation;
  spec.config.max_position_embeddings = o.max_positions;
  spec.config.pad_token_id = o.pad;
  spec.config.eos_token_id = o.eos;
  spec.config.decoder_start_token_id = o.start;
  spec.config.unk_token_id = o.unk;
  spec.config.scale_embedding = o.scale_embedding;

  size_t index = 0;
  for (AttentionKind kind : {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kDecoderCross}) {
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
    }
  }

  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const ExpectedTensor& e : ExpectedTensors(spec.config, spec.blocks)) {
    TensorSpec t{e.name, e.shape, {}};
    size_t n = 1;
    for (uint32_t d : e.shape) n *= d;
    t.data.resize(n);
    const bool is_norm = e.name.find("layer_norm") != std::string::npos;
    const bool is_embedding = e.name.find("shared") != std::string::npos ||
                              e.name.find("embed_tokens") != std::string::npos ||
                              e.name == "lm_head.weight";
    // Fan-in scaling keeps activations O(1) through the layers; LayerNorm near identity;
    // embeddings and lm_head of unit scale so logits are well separated (no near ties).
    float offset = 0.0f, scale = 0.5f;
    if (is_norm) {
      const bool gamma = e.name.compare(e.name.size() - 7, 7, ".weight") == 0;
      offset = gamma ? 1.0f : 0.0f;
      scale = gamma ? 0.2f : 0.1f;
    } else if (is_embedding) {
      scale = 1.0f;
    } else if (e.shape.size() == 2 && e.name != "final_logits_bias") {
      scale = 1.5f / std::sqrt(static_cast<float>(e.shape[1]));
    }
    for (float& v : t.data) v = offset + scale * uniform(rng);
    if (e.name == "final_logits_bias") t.data[static_cast<size_t>(o.eos)] += o.eos_bias;
    spec.tensors.push_back(std::move(t));
  }
  return spec;
}

AlignedBytes::AlignedBytes(const std::vector<uint8_t>& bytes) : size_(bytes.size()) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes.empty() ? 64 : bytes.size()) != 0) std::abort();
  data_.reset(static_cast<uint8_t*>(p));
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
}

std::vector<uint8_t> Serialize(const ModelSpec& spec) {
  auto bytes = SerializeModel(spec);
  if (!bytes.ok()) {
    ADD_FAILURE() << "SerializeModel: " << bytes.status().ToString();
    return {};
  }
  return std::move(bytes).value();
}

std::unique_ptr<TestModel> BuildModel(const ModelOptions& options) {
  auto m = std::make_unique<TestModel>();
  m->spec = MakeSpec(options);
  m->image = std::make_unique<AlignedBytes>(Serialize(m->spec));
  auto loaded = Model::LoadFromMemory(m->image->data(), m->image->size());
  if (!loaded.ok()) {
    ADD_FAILURE() << "LoadFromMemory: " << loaded.status().ToString();
    return m;
  }
  m->model = *loaded;
  return m;
}

std::vector<int32_t> RandomSource(const ModelOptions& o, size_t length, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(2, static_cast<int32_t>(o.vocab) - 1);
  std::vector<int32_t> ids;
  while (ids.size() + 1 < length) {
    const int32_t v = id(rng);
    if (v != o.pad && v != o.eos) ids.push_back(v);
  }
  ids.push_back(o.eos);
  return ids;
}

}  // namespace headwise::testing
