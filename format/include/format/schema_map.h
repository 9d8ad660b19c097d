// format/schema_map.h: the one place that translates between the generated schema types
// (schema/headwise.fbs, headwise_generated.h) and the format library's own (model_types.h,
// model_config.h, model_layout.h, model_ir.h). The writer (model_writer.cc) maps to the schema,
// the runtime's loader (runtime/src/model_verify.cc, model_describe.cc) and `headwise-convert
// inspect` map from it.
//
// Including this header needs headwise::schema (it includes the generated code); the
// libraries that read or write files link it PRIVATE, public headers never include it.
// Errors: kInvalidModel naming the block or field and the value found.
#ifndef HEADWISE_FORMAT_SCHEMA_MAP_H_
#define HEADWISE_FORMAT_SCHEMA_MAP_H_

#include <optional>
#include <string>
#include <vector>

#include "format/model_config.h"
#include "format/model_ir.h"
#include "format/model_layout.h"
#include "format/model_types.h"
#include "format/shortlist.h"
#include "headwise/status.hpp"
#include "headwise_generated.h"

namespace headwise {

// Schema -> format. A value outside this build's enum is an error.
Result<DType> FromSchema(schema::DType t);
Result<Activation> FromSchema(schema::Activation a);
Result<AttentionKind> FromSchema(schema::AttentionKind k);

// Format -> schema.
schema::DType ToSchema(DType t);
schema::Activation ToSchema(Activation a);
schema::AttentionKind ToSchema(AttentionKind k);

// The file's config (every field, the activation checked). The layout rules are
// ValidateLayout's (model_layout.h); the runtime's own limits are its own.
Result<ModelConfig> ConfigFromSchema(const schema::ModelConfig& c);

// The file's attention blocks in file order (empty when the vector is absent; ValidateLayout
// then reports the count). Errors: a missing block, an unknown kind.
Result<std::vector<BlockLayout>> BlocksFromSchema(const schema::Model& m);

// The descriptive part of a file, nothing needed to translate, in the IR's types (model_ir.h)
// as the writer wrote it from them: per block the source gates and the per-head analysis, where
// the analysis came from, and the provenance.
struct ModelNotes {
  // One entry per block, in file order; an empty entry = the block has no gate / no analysis.
  std::vector<std::vector<float>> gate_log_alpha;
  std::vector<std::vector<HeadAnalysisSpec>> head_analysis;
  std::optional<AnalysisInfoSpec> analysis_info;  // absent: the file has no AnalysisInfo
  // Provenance (empty strings when the file has none).
  std::string source_checkpoint_sha256;
  std::string source_checkpoint_name;
  std::string converter_version;
  std::string keep_heads_spec;
  std::string source_dtype;
  GateRule gate_rule = GateRule::kHard;  // Provenance.gate_rule (absent = hard)
};

// `blocks` are BlocksFromSchema(m)'s. Errors (kInvalidModel, naming the block): a block's gates
// or analysis not of one entry per source head, an analysis entry missing or not for the source
// head of its index ("decoder self-attention layer 0: 3 gate values for 4 source heads"); a
// provenance gate_rule other than "hard" or "continuous".
Result<ModelNotes> NotesFromSchema(const schema::Model& m, const std::vector<BlockLayout>& blocks);

// The format the weight matrices are stored in: the dtype of every 2-D tensor but
// final_logits_bias (which is F32 in every format); nullopt when they differ; kF32 for a file
// without matrices. Errors: an unknown dtype.
Result<std::optional<WeightFormat>> WeightFormatFromSchema(const schema::Model& m);

// The file's vocabulary shortlist as a view into the flatbuffer (valid while the file's bytes
// are), checked with CheckShortlist for `vocab_size` ids; nullopt when the file has none.
// Errors: kInvalidModel naming the array and position (format/shortlist.h).
struct ShortlistFromFile {
  ShortlistView view;
  ShortlistStats stats;
};
Result<std::optional<ShortlistFromFile>> ShortlistFromSchema(const schema::Model& m,
                                                             uint32_t vocab_size);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_SCHEMA_MAP_H_
