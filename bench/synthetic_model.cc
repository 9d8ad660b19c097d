#include "bench/synthetic_model.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "format/weight_format.h"

namespace headwise::bench {

void Die(const std::string& what) {
  std::fprintf(stderr, "headwise bench: %s\n", what.c_str());
  std::abort();
}

ModelSpec MakeSyntheticSpec(const SyntheticOptions& o) {
  const ModelSize& z = o.size;
  ModelSpec spec;
  ModelConfig& c = spec.config;
  c.d_model = z.d_model;
  c.encoder_layers = z.encoder_layers;
  c.decoder_layers = z.decoder_layers;
  c.encoder_attention_heads = c.decoder_attention_heads = z.heads;
  c.encoder_ffn_dim = c.decoder_ffn_dim = z.ffn;
  c.vocab_size = z.vocab;
  spec.config.activation = Activation::kSwish;
  spec.config.max_position_embeddings = 512;
  spec.config.pad_token_id = spec.config.decoder_start_token_id = PadId(z);
  spec.config.eos_token_id = kEos;
  spec.config.unk_token_id = kUnk;
  spec.config.scale_embedding = true;
  for (AttentionKind kind : {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kDecoderCross}) {
    const bool enc = kind == AttentionKind::kEncoderSelf;
    const uint32_t layers = enc ? z.encoder_layers : z.decoder_layers;
    const uint32_t kept = enc ? o.encoder_heads
                              : kind == AttentionKind::kDecoderSelf ? o.decoder_self_heads
                                                                : o.decoder_cross_heads;
    for (uint32_t l = 0; l < layers; ++l) {
      BlockLayout b;
      b.kind = kind;
      b.layer = l;
      b.head_dim = z.d_model / z.heads;
      b.original_num_heads = z.heads;
      for (uint32_t h = 0; h < kept && h < z.heads; ++h) b.kept_heads.push_back(h);
      b.num_heads = static_cast<uint32_t>(b.kept_heads.size());
      spec.blocks.push_back(b);
    }
  }
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const ExpectedTensor& e : ExpectedTensors(spec.config, spec.blocks)) {
    TensorSpec t;
    t.name = e.name;
    t.shape = e.shape;
    size_t n = 1;
    for (uint32_t d : e.shape) n *= d;
    t.data.resize(n);
    // Fan-in scaling keeps activations O(1); LayerNorm near identity.
    float offset = 0.0f, scale = 0.1f;
    if (e.name.find("layer_norm.weight") != std::string::npos) {
      offset = 1.0f;
    } else if (e.shape.size() == 2 && e.name != "final_logits_bias") {
      scale = 1.5f / std::sqrt(static_cast<float>(e.shape[1]));
    }
    for (float& v : t.data) v = offset + scale * uniform(rng);
    if (e.name == "final_logits_bias") t.data[kEos] -= 50.0f;  // never stop early
    spec.tensors.push_back(std::move(t));
  }
  ApplyWeightFormat(o.weights, &spec);
  return spec;
}

std::vector<uint8_t> SerializeSynthetic(const SyntheticOptions& options) {
  Result<std::vector<uint8_t>> image = SerializeModel(MakeSyntheticSpec(options));
  if (!image.ok()) Die("SerializeModel: " + image.status().ToString());
  return std::move(image).value();
}

std::unique_ptr<LoadedModel> LoadSynthetic(const SyntheticOptions& options) {
  const std::vector<uint8_t> image = SerializeSynthetic(options);
  auto m = std::make_unique<LoadedModel>();
  void* p = nullptr;
  if (posix_memalign(&p, 64, image.size()) != 0) Die("out of memory for the model image");
  std::memcpy(p, image.data(), image.size());
  m->bytes.reset(static_cast<uint8_t*>(p));
  m->size = image.size();
  Result<std::shared_ptr<const Model>> model = Model::LoadFromMemory(p, m->size);
  if (!model.ok()) Die("LoadFromMemory: " + model.status().ToString());
  m->model = *model;
  return m;
}

std::vector<int32_t> SyntheticSource(const ModelSize& size, size_t length, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(2, PadId(size) - 1);
  std::vector<int32_t> ids;
  while (ids.size() + 1 < length) ids.push_back(id(rng));
  ids.push_back(kEos);
  return ids;
}

double TranslationMacs(const SyntheticOptions& o, size_t batch, size_t src_len, size_t steps) {
  const double d = o.size.d_model, hd = d / o.size.heads, ffn = o.size.ffn, V = o.size.vocab;
  const double ie = o.encoder_heads * hd, is = o.decoder_self_heads * hd,
               ic = o.decoder_cross_heads * hd;
  const double n = static_cast<double>(batch * src_len);
  const double S = static_cast<double>(src_len);
  double enc = n * (d * 3 * ie + ie * d + 2 * d * ffn) + 2 * n * S * ie;
  double cross_kv = n * d * 2 * ic;
  double dec = 0;
  for (size_t step = 0; step < steps; ++step) {
    dec += d * 3 * is + is * d + d * ic + ic * d + 2 * d * ffn + 2.0 * (step + 1) * is +
           2 * S * ic;
  }
  return enc * o.size.encoder_layers +
         (cross_kv + static_cast<double>(batch) * dec) * o.size.decoder_layers +
         static_cast<double>(batch * steps) * d * V;
}

}  // namespace headwise::bench
