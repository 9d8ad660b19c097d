// converter/src/model_writer.h: builds a .hwm file from an in-memory model description.
// Used by the converter (after reading and stripping a checkpoint) and by tests and benchmarks
// that need synthetic models. The writer validates the whole spec before producing a byte.
//
// Ownership: the writer copies from the spec; the spec may be freed afterwards.
#ifndef HEADWISE_CONVERTER_MODEL_WRITER_H_
#define HEADWISE_CONVERTER_MODEL_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/model_layout.h"
#include "headwise/status.hpp"

namespace headwise::convert {

enum class Activation : uint8_t { kRelu = 0, kSwish = 1, kGelu = 2 };

struct TensorSpec {
  std::string name;
  std::vector<uint32_t> shape;
  std::vector<float> data;  // row-major, product(shape) values (written as F32)
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

// Everything checked before writing: layout, tensor set and shapes (names the first
// mismatch: "model.encoder.layers.3.self_attn.q_proj.weight: expected [192, 256], found
// [256, 256]"), data sizes, finite values, special ids < vocab_size, gate lengths, tokenizer
// (vocab length == vocab_size, both protos present or none). Errors: kInvalidCheckpoint.
Status ValidateModelSpec(const ModelSpec& spec);

// The complete file image (size-prefixed flatbuffer + 64-aligned data segment + checksum).
Result<std::vector<uint8_t>> SerializeModel(const ModelSpec& spec);

// Validates, serializes and writes atomically (temporary file + rename).
Status WriteModelFile(const ModelSpec& spec, const std::string& path,
                      const AtomicWriteOptions& options);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_MODEL_WRITER_H_
