// tests/runtime/test_model.h: synthetic models for the runtime tests, built with the converter's
// model writer from seeded random weights, and loaded from an aligned in-memory image.
// Tests only.
#ifndef HEADWISE_TESTS_RUNTIME_TEST_MODEL_H_
#define HEADWISE_TESTS_RUNTIME_TEST_MODEL_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "format/model_writer.h"
#include "headwise/headwise.hpp"

namespace headwise::testing {

struct ModelOptions {
  uint32_t d_model = 16;
  uint32_t encoder_layers = 2;
  uint32_t decoder_layers = 2;
  uint32_t heads = 4;  // source heads per block (encoder and decoder)
  uint32_t encoder_ffn = 32;
  uint32_t decoder_ffn = 24;
  uint32_t vocab = 23;
  uint32_t max_positions = 64;
  Activation activation = Activation::kSwish;
  bool share_embeddings = true;
  bool tie_embeddings = true;
  bool scale_embedding = true;
  // Kept heads per block in canonical order (encoder self, decoder self, decoder cross);
  // a missing entry keeps every head.
  std::vector<std::vector<uint32_t>> kept;
  int32_t eos = 0;
  int32_t unk = 1;
  int32_t pad = 22;    // also the decoder start, as in Marian
  int32_t start = 22;
  float eos_bias = 0.0f;  // added to final_logits_bias[eos] so outputs end earlier
  uint32_t seed = 1;
};

ModelSpec MakeSpec(const ModelOptions& options);

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
// (member order); Translators made from `model` must be destroyed before the TestModel.
struct TestModel {
  ModelSpec spec;
  std::unique_ptr<AlignedBytes> image;
  std::shared_ptr<const Model> model;
};

// Serializes and loads; aborts the test (ADD_FAILURE + null model) on any error.
std::unique_ptr<TestModel> BuildModel(const ModelOptions& options);
std::vector<uint8_t> Serialize(const ModelSpec& spec);

// Deterministic random source ids (each in [2, vocab) minus pad, then EOS).
std::vector<int32_t> RandomSource(const ModelOptions& options, size_t length, uint32_t seed);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_RUNTIME_TEST_MODEL_H_
