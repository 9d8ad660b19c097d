// tests/support/synthetic_model.h: the one builder of synthetic models (seeded weights, any
// size and head layout) for the tests (runtime, api, converter), the benchmarks and the
// fuzzers, and the loader that puts one into 64-byte aligned memory for LoadFromMemory.
// Each suite keeps a small preset of its own (tests/runtime/test_model.h,
// tests/api/test_model.h, tests/converter/spec_fixture.h, bench/synthetic_model.h).
//
// Ownership: plain values; a LoadedModel owns the image its Model reads in place.
#ifndef HEADWISE_TESTS_SUPPORT_SYNTHETIC_MODEL_H_
#define HEADWISE_TESTS_SUPPORT_SYNTHETIC_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "format/model_ir.h"
#include "format/model_types.h"
#include "headwise/headwise.hpp"

namespace headwise::testing {

// How the tensors are filled; one generator (std::mt19937 seeded with `seed`) runs over the
// tensors in ExpectedTensors order.
enum class WeightValues {
  // offset + scale * U(-1, 1): weight matrices 1.5 / sqrt(fan-in) (activations stay O(1)),
  // embeddings and lm_head `embedding_scale` (0: like the other matrices), LayerNorm gains
  // 1 +- norm_gain_scale, LayerNorm biases norm_bias_scale, other vectors vector_scale.
  kScaledUniform,
  // N(0, 0.5) everywhere, plus 1 for the LayerNorm gains.
  kNormal,
  // FixtureValue(tensor, index): distinct, exactly representable (writer round trips).
  kFixture,
};

struct SyntheticOptions {
  uint32_t d_model = 16;
  uint32_t encoder_layers = 2;
  uint32_t decoder_layers = 2;
  uint32_t heads = 4;  // source heads per block (encoder and decoder); head_dim = d / heads
  uint32_t encoder_ffn = 32;
  uint32_t decoder_ffn = 24;
  uint32_t vocab = 23;
  uint32_t max_positions = 64;
  Activation activation = Activation::kSwish;
  bool share_embeddings = true;
  bool tie_embeddings = true;
  bool scale_embedding = true;
  int32_t eos = 0;
  int32_t unk = 1;
  int32_t pad = 22;
  int32_t start = 22;  // decoder start; Marian uses pad
  // Kept heads per block in canonical order (encoder self, decoder self, decoder cross); a
  // missing entry keeps every head.
  std::vector<std::vector<uint32_t>> kept;
  // gate_log_alpha of block i: {1.5, -2, 0.25, i, i, ...} (one per source head); else none.
  bool gates = false;

  WeightValues values = WeightValues::kScaledUniform;
  uint32_t seed = 1;
  float eos_bias = 0.0f;  // added to final_logits_bias[eos]: > 0 ends outputs early
  float embedding_scale = 1.0f;
  float vector_scale = 0.5f;
  float norm_gain_scale = 0.2f;
  float norm_bias_scale = 0.1f;
  WeightFormat weights = WeightFormat::kF32;  // ApplyWeightFormat at the end
};

// A valid model IR (ValidateModelSpec passes) without tokenizer or provenance.
ModelSpec MakeSyntheticSpec(const SyntheticOptions& options);

// A vocabulary shortlist (format/shortlist.h) for a vocabulary of `vocab` ids: `frequent` ids
// and, for every source id, `per_source` ids, each set drawn uniformly without repetition from
// [0, vocab) by std::mt19937(seed) (ascending, as the format stores them). per_source >= vocab
// or frequent >= vocab: every id.
ShortlistSpec MakeSyntheticShortlist(uint32_t vocab, uint32_t frequent, uint32_t per_source,
                                     uint32_t seed);

// The value kFixture stores at flat index `i` of the tensor numbered `tensor_index` in
// ExpectedTensors order.
float FixtureValue(size_t tensor_index, size_t i);

// The first `k` source heads of each block of a kind, as SyntheticOptions::kept.
std::vector<std::vector<uint32_t>> FirstHeads(const SyntheticOptions& options,
                                              uint32_t encoder_self, uint32_t decoder_self,
                                              uint32_t decoder_cross);

// A file image in 64-byte aligned memory (what LoadFromMemory requires).
class AlignedBytes {
 public:
  explicit AlignedBytes(const std::vector<uint8_t>& bytes);
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  uint8_t* data() { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

// A spec, its serialized image and the model loaded from it. The image outlives the model
// (member order); Translators made from `model` must be destroyed before the LoadedModel.
struct LoadedModel {
  ModelSpec spec;
  std::unique_ptr<AlignedBytes> image;
  std::shared_ptr<const Model> model;
};

// Serializes `spec` and loads it from memory. Errors: SerializeModel's, LoadFromMemory's.
Result<std::unique_ptr<LoadedModel>> LoadSpec(ModelSpec spec);

// Deterministic source ids: `length - 1` ids drawn from [2, vocab) skipping pad and eos, then
// eos.
std::vector<int32_t> RandomSource(uint32_t vocab, int32_t pad, int32_t eos, size_t length,
                                  uint32_t seed);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_SUPPORT_SYNTHETIC_MODEL_H_
