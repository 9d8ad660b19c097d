// converter/src/convert.h: the `headwise-convert CHECKPOINT_DIR -o MODEL.hwm` command.
//
// Order: output path checks (refuses an existing output unless `force`, an output that is a
// directory, inside the checkpoint directory, or the same file as any input, symlinks
// resolved) -> read and validate the checkpoint and the keep-heads spec -> strip heads ->
// read the head analysis (if any) -> read the vocabulary shortlist (if given) -> serialize ->
// verify the image with format/model_file.h -> write atomically. Nothing is written unless
// every step succeeded; the checkpoint directory is only read.
//
// Errors: kInvalidArgument for a malformed or misfitting --keep-heads spec, kInvalidCheckpoint
// for the checkpoint, kIoError for unreadable inputs and output problems.
#ifndef HEADWISE_CONVERTER_CONVERT_H_
#define HEADWISE_CONVERTER_CONVERT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/model_layout.h"
#include "format/model_writer.h"
#include "headwise/status.hpp"

namespace headwise::convert {

struct ConvertOptions {
  std::string checkpoint_dir;
  std::string output_path;
  std::optional<std::string> keep_heads;  // the --keep-heads argument: a file path or inline
  bool force = false;                     // overwrite an existing output
  WeightFormat weights = WeightFormat::kF32;  // --weights (format/model_types.h)
  // Per-head analysis to store (analysis_reader.h): by default CHECKPOINT_DIR/analysis.json
  // when that file exists; `analysis` names another file (which must exist); `no_analysis`
  // stores none. An analysis that does not match the checkpoint fails the conversion.
  std::optional<std::string> analysis;  // --analysis FILE
  bool no_analysis = false;             // --no-analysis
  // --gate-rule: the test-time rule of the gates; default the checkpoint's config.json
  // headwise_gate_rule (hard when absent). checkpoint_to_spec.h says what each does.
  std::optional<GateRule> gate_rule;
  // --shortlist FILE: the vocabulary shortlist to store (shortlist_reader.h), made for this
  // checkpoint's vocabulary; none by default.
  std::optional<std::string> shortlist;
};

// What was written, for the summary.
struct ConvertSummary {
  std::string checkpoint_name;
  std::string output_path;
  ModelConfig config;
  std::vector<BlockLayout> blocks;
  size_t tensor_count = 0;
  uint64_t file_bytes = 0;
  uint64_t data_bytes = 0;
  uint64_t data_checksum = 0;
  std::string source_dtype;
  std::string weights;  // "fp32", "fp16" or "int8"
  std::string source_sha256;
  std::string keep_heads_spec;
  bool has_gates = false;
  GateRule gate_rule = GateRule::kHard;  // the rule applied to the gates (when has_gates)
  size_t vocab_size = 0;
  std::string analysis_path;  // the analysis.json stored, empty if none
  AnalysisInfoSpec analysis_info;
  std::string shortlist_path;  // the shortlist stored, empty if none
  size_t shortlist_frequent = 0;
  size_t shortlist_sources = 0;  // source ids with a non-empty list
  size_t shortlist_longest = 0;
  size_t shortlist_entries = 0;
};

Result<ConvertSummary> ConvertCheckpoint(const ConvertOptions& options);

// One screen: config, heads kept per block (a row per attention kind, a column per layer),
// totals, sizes, checksum and source hash.
std::string FormatConvertSummary(const ConvertSummary& summary);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_CONVERT_H_
