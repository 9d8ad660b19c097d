// format/model_ir.h: the model IR, an in-memory description of everything a .hwm file holds
// (config, attention blocks with their kept heads, tensors with their true values and the
// dtype each is to be stored in, gates, head analysis, tokenizer, vocabulary shortlist,
// provenance). The converter
// builds one from a checkpoint; tests, benchmarks and fuzzers build synthetic ones
// (tests/support/synthetic_model.h); format/model_writer.h turns one into a file.
//
// Ownership: plain values; the writer copies from the IR, which may be freed afterwards.
#ifndef HEADWISE_FORMAT_MODEL_IR_H_
#define HEADWISE_FORMAT_MODEL_IR_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "format/model_config.h"
#include "format/model_layout.h"
#include "format/model_types.h"
#include "format/shortlist.h"
#include "headwise/status.hpp"

namespace headwise {

struct TensorSpec {
  std::string name;
  std::vector<uint32_t> shape;
  std::vector<float> data;  // row-major, product(shape) values, the tensor's true values
  DType dtype = DType::kF32;  // the writer encodes `data` in this type
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
  ModelConfig config;

  // One per attention block in canonical order (see ValidateLayout).
  std::vector<BlockLayout> blocks;
  // Source gate log_alpha per block (length original_num_heads), or empty (no gate) per block;
  // either empty or one entry per block.
  std::vector<std::vector<float>> gate_log_alpha;
  // The rule that turned gate_log_alpha into kept heads (and, continuous, out_proj scales);
  // stored as Provenance.gate_rule "continuous", nothing for kHard.
  GateRule gate_rule = GateRule::kHard;

  // Per-head analysis: empty (none), or one entry per block, each with exactly
  // original_num_heads entries in source order (source_head == index). Written with
  // analysis_info when non-empty.
  std::vector<std::vector<HeadAnalysisSpec>> head_analysis;
  AnalysisInfoSpec analysis_info;

  // Exactly the tensors of ExpectedTensors(config, blocks), in any order.
  std::vector<TensorSpec> tensors;

  // Tokenizer: SentencePiece model protos and vocab[id] = piece (length vocab_size). All three
  // empty = a model without tokenizer (token-id use only, e.g. synthetic benchmark models).
  std::string source_spm;
  std::string target_spm;
  std::vector<std::string> vocab;

  // Vocabulary shortlist (format/shortlist.h); empty = none.
  ShortlistSpec shortlist;

  // Provenance.
  std::string source_checkpoint_sha256;
  std::string source_checkpoint_name;
  std::string keep_heads_spec;
  std::string source_dtype;
};

// Everything checked before writing: layout, tensor set and shapes (names the first
// mismatch: "model.encoder.layers.3.self_attn.q_proj.weight: expected [192, 256], found
// [256, 256]"), data sizes, finite values, special ids < vocab_size, gate and head-analysis
// lengths, tokenizer (vocab length == vocab_size, both protos present or none), the shortlist's
// rules (CheckShortlist) when there is one.
// Errors: kInvalidCheckpoint.
Status ValidateModelSpec(const ModelSpec& spec);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_MODEL_IR_H_
