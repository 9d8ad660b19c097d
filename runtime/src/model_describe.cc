#include "model_describe.h"

#include <optional>
#include <string>
#include <utility>

#include "format/model_types.h"
#include "format/schema_map.h"

namespace headwise {

Status DescribeModel(const schema::Model& m, const std::vector<BlockLayout>& blocks,
                     ModelInfo* info) {
  if (blocks.size() != info->attention.size()) {
    return InternalError("DescribeModel: " + std::to_string(blocks.size()) + " blocks, " +
                         std::to_string(info->attention.size()) + " bound");
  }
  HW_ASSIGN_OR_RETURN(ModelNotes notes, NotesFromSchema(m, blocks));
  for (size_t i = 0; i < blocks.size(); ++i) {
    AttentionBlockInfo& b = info->attention[i];
    b.gate_log_alpha = std::move(notes.gate_log_alpha[i]);
    b.analysis.clear();
    for (HeadAnalysisSpec& h : notes.head_analysis[i]) {
      HeadAnalysisInfo a;
      a.source_head = static_cast<int>(h.source_head);
      a.relevance = h.relevance;
      a.confidence = h.confidence;
      a.michel = h.michel;
      a.roles = std::move(h.roles);
      b.analysis.push_back(std::move(a));
    }
  }
  HW_ASSIGN_OR_RETURN(const std::optional<WeightFormat> format, WeightFormatFromSchema(m));
  info->format_version = static_cast<int>(m.format_version());
  info->weight_format = format.has_value() ? WeightFormatName(*format) : "mixed";
  info->source_checkpoint_sha256 = std::move(notes.source_checkpoint_sha256);
  info->source_checkpoint_name = std::move(notes.source_checkpoint_name);
  info->converter_version = std::move(notes.converter_version);
  info->keep_heads_spec = std::move(notes.keep_heads_spec);
  info->source_dtype = std::move(notes.source_dtype);
  if (notes.analysis_info.has_value()) {
    info->analysis_rule = std::move(notes.analysis_info->relevance_rule);
    info->analysis_data = std::move(notes.analysis_info->data);
    info->analysis_sha256 = std::move(notes.analysis_info->analysis_sha256);
  }
  return Status::Ok();
}

}  // namespace headwise
