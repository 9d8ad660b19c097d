// converter/src/model_writer.h: builds a .hwm file from an in-memory model description.
// Used by the converter (after reading and stripping a checkpoint) and by tests and benchmarks
// that need synthetic models. The writer validates the whole spec before producing a byte.
//
// Ownership: the writer copies from the spec; the spec may be freed afterwards.
#ifndef HEADWISE_CONVERTER_MODEL_WRITER_H_
#define HEADWISE_CONVERTER_MODEL_WRITER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/model_layout.h"
#include "headwise/status.hpp"

namespace headwise::convert {

enum class Activation : uint8_t { kRelu = 0, kSwish = 1, kGelu = 2 };

// How a tensor's values are stored in the file (schema DType).
//   kF32: as given.
//   kF16: IEEE binary16, rounded to nearest even; |value| must be <= 65504.
//   kI8:  2-D only; symmetric per output channel (row r): scale[r] = max_j |v[r, j]| / 127
//         (1 for an all-zero row), q = round(v / scale[r]) in [-127, 127]; the file holds q
//         and the row scales (Tensor.quantization, axis 0, no zero point).
enum class TensorDType : uint8_t { kF32 = 0, kF16 = 1, kI8 = 2 };

struct TensorSpec {
  std::string name;
  std::vector<uint32_t> shape;
  std::vector<float> data;  // row-major, product(shape) values, the tensor's true values
  TensorDType dtype = TensorDType::kF32;  // the writer encodes `data` in this type
};

// What `headwise-train analyze` found about one source head (schema HeadAnalysis). A statistic
// that was not computed is NaN.
struct HeadAnalysisSpec {
  uint32_t source_head = 0;
  float relevance = std::numeric_limits<float>::quiet_NaN();
  float confidence = std::numeric_limits<float>::quiet_NaN();
  float michel = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::string> roles;
};

// Where the analysis came from (schema AnalysisInfo).
struct AnalysisInfoSpec {
  std::string relevance_rule;   // "attnlrp" or "z"
  std::string data;             // e.g. "work/corpus-de dev, 500 sentences, greedy"
  std::string analysis_sha256;  // of the analysis.json read
};

struct ModelSpec {
  LayoutConfig layout;
  Activation activation = Activation::kSwish;
  uint32_t max_position_embeddings = 512;
  int32_t pad_token_id = 0;
  int32_t eos_token_id = 0;
  int32_t decoder_start_token_id = 0;
  int32_t unk_token_id = 0;
  bool scale_embedding = false;
  float layer_norm_eps = 1e-5f;

  // One per attention block in canonical order (see ValidateLayout).
  std::vector<BlockLayout> blocks;
  // Source gate log_alpha per block (length original_num_heads), or empty (no gate) per block;
  // either empty or one entry per block.
  std::vector<std::vector<float>> gate_log_alpha;

  // Per-head analysis: empty (none), or one entry per block, each with exactly
  // original_num_heads entries in source order (source_head == index). Written with
  // analysis_info when non-empty.
  std::vector<std::vector<HeadAnalysisSpec>> head_analysis;
  AnalysisInfoSpec analysis_info;

  // Exactly the tensors of ExpectedTensors(layout, blocks), in any order.
  std::vector<TensorSpec> tensors;

  // Tokenizer: SentencePiece model protos and vocab[id] = piece (length vocab_size). All three
  // empty = a model without tokenizer (token-id use only, e.g. synthetic benchmark models).
  std::string source_spm;
  std::string target_spm;
  std::vector<std::string> vocab;

  // Provenance.
  std::string source_checkpoint_sha256;
  std::string source_checkpoint_name;
  std::string keep_heads_spec;
  std::string source_dtype;
};

// The weight formats of `headwise-convert --weights`.
//   fp32: every tensor F32.
//   fp16: the weight matrices (attention q/k/v/out, fc1, fc2, embeddings, lm_head) F16.
//   int8: the same matrices I8 with per-row scales.
// Biases, LayerNorm parameters and final_logits_bias stay F32 in every format.
enum class WeightFormat : uint8_t { kF32 = 0, kF16 = 1, kI8 = 2 };
// "fp32", "fp16", "int8".
const char* WeightFormatName(WeightFormat format);
// Parses those names; false for anything else.
bool ParseWeightFormat(const std::string& name, WeightFormat* format);
// Sets each tensor's dtype for `format` (the matrices above; everything else F32).
void ApplyWeightFormat(WeightFormat format, ModelSpec* spec);
// The kI8 encoding of a [rows, cols] matrix: writes the rows * cols quantized values to `q`
// and returns the row scales (value = q * scale[row]).
std::vector<float> QuantizeRowsI8(const float* data, size_t rows, size_t cols,
                                  std::vector<int8_t>* q);

// Everything checked before writing: layout, tensor set and shapes (names the first
// mismatch: "model.encoder.layers.3.self_attn.q_proj.weight: expected [192, 256], found
// [256, 256]"), data sizes, finite values, special ids < vocab_size, gate and head-analysis lengths, tokenizer
// (vocab length == vocab_size, both protos present or none). Errors: kInvalidCheckpoint.
Status ValidateModelSpec(const ModelSpec& spec);

// The complete file image (size-prefixed flatbuffer + 64-aligned data segment + checksum).
Result<std::vector<uint8_t>> SerializeModel(const ModelSpec& spec);

// Validates, serializes and writes atomically (temporary file + rename).
Status WriteModelFile(const ModelSpec& spec, const std::string& path,
                      const AtomicWriteOptions& options);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_MODEL_WRITER_H_
