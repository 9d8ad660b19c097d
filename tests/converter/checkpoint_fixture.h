// tests/converter/checkpoint_fixture.h: builds small MarianMT checkpoint directories
// (config.json, model.safetensors, vocab.json, source.spm, target.spm) for converter tests.
// Every field is editable before Write(), so a test breaks exactly one thing.
//
// Default model: d_model 8, 2 encoder + 2 decoder layers, 4 heads per block (head_dim 2),
// ffn 16 / 12, vocab 12, max positions 16, swish, shared and tied embeddings, no gates.
// Tensor values are k/8 with |k| <= 127: exact in F32, F16 and BF16, distinct within a tensor.
// The .spm files are arbitrary bytes (the converter copies them without parsing). Tests only.
#ifndef HEADWISE_TESTS_CONVERTER_CHECKPOINT_FIXTURE_H_
#define HEADWISE_TESTS_CONVERTER_CHECKPOINT_FIXTURE_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace headwise::testing {

struct FixtureTensor {
  std::string name;
  std::vector<uint64_t> shape;
  std::vector<float> values;
  std::string dtype = "F32";  // F32, F16 or BF16 (values must be exact in it)
};

struct CheckpointFixture {
  nlohmann::json config;
  std::vector<FixtureTensor> tensors;
  nlohmann::json vocab;  // piece -> id
  std::string source_spm = std::string("\x0a\x05source-spm\x00", 13);
  std::string target_spm = "target-spm-bytes";
  std::map<std::string, std::string> metadata = {{"format", "pt"}};

  // The tensor called `name`; aborts the test binary when absent (a fixture bug).
  FixtureTensor& Get(const std::string& name);
  bool Has(const std::string& name) const;
  void Remove(const std::string& name);
  // Adds or replaces `<block>.head_gate.log_alpha` (always F32, as the trainer writes it).
  void SetGate(const std::string& block, const std::vector<float>& log_alpha);
  // Stores every weight tensor as `dtype`.
  void SetDType(const std::string& dtype);

  // Writes the five files into `dir` (created if needed).
  void Write(const std::string& dir) const;
};

struct FixtureOptions {
  bool share_embeddings = true;
  bool tie_embeddings = true;
  // Hugging Face style duplicates: embed_tokens copies of the shared embedding, a tied
  // lm_head.weight, and the sinusoidal position tables.
  bool with_duplicates = false;
  std::string activation = "swish";
};

CheckpointFixture MakeCheckpoint(const FixtureOptions& options = {});

// The fixture's value pattern: element i of the tensor numbered `t`.
float PatternValue(size_t t, size_t i);

// The safetensors file image of `tensors` (header padded with spaces to 8 bytes).
std::string SerializeSafetensors(const std::vector<FixtureTensor>& tensors,
                                 const std::map<std::string, std::string>& metadata);

// Hugging Face's sinusoidal table, written independently of the converter's.
std::vector<float> ReferenceSinusoids(uint32_t positions, uint32_t dim);

// Reads a whole file ("" when unreadable) / writes one.
std::string ReadAll(const std::string& path);
void WriteAll(const std::string& path, const std::string& bytes);

// Every regular file under `dir` (relative path -> contents), for "untouched" checks.
std::map<std::string, std::string> Snapshot(const std::string& dir);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_CONVERTER_CHECKPOINT_FIXTURE_H_
