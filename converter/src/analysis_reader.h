// converter/src/analysis_reader.h: reads the analysis.json that `headwise-train analyze`
// writes (format "headwise-head-analysis", version 1; trainer/headwise_trainer/analysis) and
// matches it to a checkpoint's attention blocks, for the per-head numbers the converter stores
// in the model file (schema HeadAnalysis / AnalysisInfo).
//
// What is read, per head: "relevance", "confidence", "michel" (numbers, or null = not
// computed -> NaN) and "roles" (strings; absent = none). Everything else in the file is
// ignored. Checked: format and version; one block per attention block of the checkpoint, same
// kind, layer and source head count, in the canonical order (encoder self 0.., decoder self
// 0.., decoder cross 0..); one entry per source head in order ("head" == index); numbers finite;
// and, when the file names it, that checkpoint.model_safetensors_sha256 is the SHA-256 of this
// checkpoint's model.safetensors (an analysis of another checkpoint is refused, not stored).
//
// Errors: kInvalidCheckpoint "<where>: <what was expected>, found <what>"; kIoError when the
// file cannot be read.
#ifndef HEADWISE_CONVERTER_ANALYSIS_READER_H_
#define HEADWISE_CONVERTER_ANALYSIS_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "format/model_layout.h"
#include "format/model_writer.h"
#include "headwise/status.hpp"

namespace headwise::convert {

inline constexpr char kAnalysisFile[] = "analysis.json";

struct HeadAnalysisFile {
  std::vector<std::vector<HeadAnalysisSpec>> blocks;  // one per checkpoint block, source order
  AnalysisInfoSpec info;
};

// `blocks`: the checkpoint's blocks in canonical order (kind, layer, original_num_heads are
// used). `checkpoint_sha256`: hex SHA-256 of its model.safetensors. `where` prefixes messages.
Result<HeadAnalysisFile> ParseHeadAnalysis(std::string_view text, const std::string& where,
                                           const std::vector<BlockLayout>& blocks,
                                           const std::string& checkpoint_sha256);

// Reads `path` and parses it as above (info.analysis_sha256 = SHA-256 of the file).
Result<HeadAnalysisFile> ReadHeadAnalysis(const std::string& path,
                                          const std::vector<BlockLayout>& blocks,
                                          const std::string& checkpoint_sha256);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_ANALYSIS_READER_H_
