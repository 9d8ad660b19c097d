// tests/runtime/test_model.h: the runtime tests' preset of the shared synthetic-model builder
// (tests/support/synthetic_model.h): ModelOptions are its options with their defaults (d_model
// 16, 2 + 2 layers, 4 heads, swish, vocab 23, pad = start = 22), BuildModel loads one and
// fails the current test on an error. Tests only.
#ifndef HEADWISE_TESTS_RUNTIME_TEST_MODEL_H_
#define HEADWISE_TESTS_RUNTIME_TEST_MODEL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "format/model_ir.h"
#include "headwise/headwise.hpp"
#include "tests/support/synthetic_model.h"

namespace headwise::testing {

using ModelOptions = SyntheticOptions;
using TestModel = LoadedModel;

inline ModelSpec MakeSpec(const ModelOptions& options) { return MakeSyntheticSpec(options); }

// The weight-format tests' model: 64 wide, 4 heads, FFN 128 (encoder) / 96 (decoder), vocab 50
// (pad = start = 49), and blocks that keep 2, 0, 1, 3, 0 and 2 of their 4 heads (pruned and
// empty blocks).
inline ModelOptions PrunedModelOptions() {
  ModelOptions o;
  o.d_model = 64;
  o.heads = 4;
  o.encoder_ffn = 128;
  o.decoder_ffn = 96;
  o.vocab = 50;
  o.pad = o.start = 49;
  o.kept = {{0, 2}, {}, {1}, {0, 1, 3}, {}, {2, 3}};
  return o;
}

// Peaked enough, with EOS often near the top, that hypotheses finish at different steps (most
// settings of embedding_scale and eos_bias either never finish or finish every beam at once):
// for the beam stopping rules and the minimum length.
inline ModelOptions EarlyEosModelOptions() {
  ModelOptions o;
  o.embedding_scale = 1.2f;
  o.eos_bias = 8.0f;
  o.seed = 5;
  return o;
}

// Serializes and loads; fails the test (ADD_FAILURE, null model) on any error.
std::unique_ptr<TestModel> BuildModel(const ModelOptions& options);
// The same with its weights stored in `format`.
inline std::unique_ptr<TestModel> BuildModel(ModelOptions options, WeightFormat format) {
  options.weights = format;
  return BuildModel(options);
}
// SerializeModel, failing the test (and returning no bytes) on an error.
std::vector<uint8_t> Serialize(const ModelSpec& spec);

// Deterministic random source ids (each in [2, vocab) minus pad and eos, then EOS).
inline std::vector<int32_t> RandomSource(const ModelOptions& o, size_t length, uint32_t seed) {
  return RandomSource(o.vocab, o.pad, o.eos, length, seed);
}

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_RUNTIME_TEST_MODEL_H_
