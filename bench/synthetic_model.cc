#include "bench/synthetic_model.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include <unistd.h>

#include "format/model_writer.h"

namespace headwise::bench {

void Die(const std::string& what) {
  std::fprintf(stderr, "headwise bench: %s\n", what.c_str());
  std::abort();
}

ModelSpec MakeSyntheticSpec(const SyntheticOptions& o) {
  const ModelSize& z = o.size;
  testing::SyntheticOptions t;
  t.d_model = z.d_model;
  t.encoder_layers = z.encoder_layers;
  t.decoder_layers = z.decoder_layers;
  t.heads = z.heads;
  t.encoder_ffn = t.decoder_ffn = z.ffn;
  t.vocab = z.vocab;
  t.max_positions = 512;
  t.activation = Activation::kSwish;
  t.pad = t.start = PadId(z);
  t.eos = kEos;
  t.unk = kUnk;
  t.kept = testing::FirstHeads(t, o.encoder_heads, o.decoder_self_heads, o.decoder_cross_heads);
  t.seed = o.seed;
  // Fan-in scaling keeps activations O(1) (embeddings too); LayerNorm near identity.
  t.values = testing::WeightValues::kScaledUniform;
  t.embedding_scale = 0.0f;
  t.vector_scale = t.norm_gain_scale = t.norm_bias_scale = 0.1f;
  t.eos_bias = -50.0f;  // never stop early
  t.weights = o.weights;
  ModelSpec spec = testing::MakeSyntheticSpec(t);
  if (o.shortlist) {
    spec.shortlist = testing::MakeSyntheticShortlist(z.vocab, kShortlistFrequent,
                                                     kShortlistPerSource, o.seed);
  }
  return spec;
}

std::vector<uint8_t> SerializeSynthetic(const SyntheticOptions& options) {
  Result<std::vector<uint8_t>> image = SerializeModel(MakeSyntheticSpec(options));
  if (!image.ok()) Die("SerializeModel: " + image.status().ToString());
  return std::move(image).value();
}

std::unique_ptr<LoadedModel> LoadSynthetic(const SyntheticOptions& options) {
  auto m = std::make_unique<LoadedModel>();
  m->model = LoadSyntheticFile(options);
  return m;
}

std::string WriteTemp(const std::vector<uint8_t>& image, const std::string& tag) {
  const std::string path = "/tmp/headwise_bench_" + std::to_string(getpid()) + "_" + tag + ".hwm";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(image.data(), 1, image.size(), f) != image.size() ||
      std::fclose(f) != 0) {
    Die("cannot write " + path);
  }
  return path;
}

std::shared_ptr<const Model> LoadSyntheticFile(const SyntheticOptions& options) {
  const std::string path = WriteTemp(SerializeSynthetic(options),
                                     std::string(options.size.name) + "_" +
                                         WeightFormatName(options.weights) + "_file");
  Result<std::shared_ptr<const Model>> model = Model::Load(path);
  std::remove(path.c_str());
  if (!model.ok()) Die("loading " + path + ": " + model.status().ToString());
  return std::move(model).value();
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
