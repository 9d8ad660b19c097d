#include "model_describe.h"

#include <string>
#include <utility>
#include <vector>

namespace headwise {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// The format of the weight matrices: every 2-D tensor but final_logits_bias (which is [1, V]
// and always F32).
std::string WeightFormat(const schema::Model& m) {
  const char* format = nullptr;
  if (m.tensors() == nullptr) return "fp32";
  for (const schema::Tensor* t : *m.tensors()) {
    if (t == nullptr || t->shape() == nullptr || t->shape()->size() != 2) continue;
    if (t->name() != nullptr && t->name()->string_view() == "final_logits_bias") continue;
    const char* f = t->dtype() == schema::DType::F16  ? "fp16"
                    : t->dtype() == schema::DType::I8 ? "int8"
                                                      : "fp32";
    if (format != nullptr && std::string(format) != f) return "mixed";
    format = f;
  }
  return format != nullptr ? format : "fp32";
}

Status DescribeBlock(const schema::AttentionBlock& a, AttentionBlockInfo* b) {
  const auto heads = static_cast<size_t>(b->original_num_heads);
  if (const auto* gates = a.gate_log_alpha(); gates != nullptr && gates->size() != 0) {
    if (gates->size() != heads) {
      return InvalidModel(b->name + ": " + std::to_string(gates->size()) + " gate values for " +
                          std::to_string(heads) + " source heads");
    }
    b->gate_log_alpha.assign(gates->begin(), gates->end());
  }
  const auto* analysis = a.analysis();
  if (analysis == nullptr || analysis->size() == 0) return Status::Ok();
  if (analysis->size() != heads) {
    return InvalidModel(b->name + ": analysis of " + std::to_string(analysis->size()) +
                        " heads for " + std::to_string(heads) + " source heads");
  }
  b->analysis.reserve(heads);
  for (flatbuffers::uoffset_t h = 0; h < analysis->size(); ++h) {
    const schema::HeadAnalysis* e = analysis->Get(h);
    if (e == nullptr || e->source_head() != h) {
      return InvalidModel(b->name + ": analysis entry " + std::to_string(h) +
                          " is not for source head " + std::to_string(h));
    }
    HeadAnalysisInfo info;
    info.source_head = static_cast<int>(h);
    info.relevance = e->relevance();
    info.confidence = e->confidence();
    info.michel = e->michel();
    if (const auto* roles = e->roles(); roles != nullptr) {
      for (const flatbuffers::String* r : *roles) info.roles.push_back(Str(r));
    }
    b->analysis.push_back(std::move(info));
  }
  return Status::Ok();
}

}  // namespace

Status DescribeModel(const schema::Model& m, ModelInfo* info) {
  const auto* attention = m.attention();
  const size_t blocks = attention != nullptr ? attention->size() : 0;
  if (blocks != info->attention.size()) {
    return InternalError("DescribeModel: " + std::to_string(blocks) + " blocks in the file, " +
                         std::to_string(info->attention.size()) + " bound");
  }
  for (flatbuffers::uoffset_t i = 0; i < blocks; ++i) {
    HW_RETURN_IF_ERROR(DescribeBlock(*attention->Get(i), &info->attention[i]));
  }
  info->format_version = static_cast<int>(m.format_version());
  info->weight_format = WeightFormat(m);
  if (const schema::Provenance* p = m.provenance(); p != nullptr) {
    info->source_checkpoint_sha256 = Str(p->source_checkpoint_sha256());
    info->source_checkpoint_name = Str(p->source_checkpoint_name());
    info->converter_version = Str(p->converter_version());
    info->keep_heads_spec = Str(p->keep_heads_spec());
    info->source_dtype = Str(p->source_dtype());
  }
  if (const schema::AnalysisInfo* a = m.analysis(); a != nullptr) {
    info->analysis_rule = Str(a->relevance_rule());
    info->analysis_data = Str(a->data());
    info->analysis_sha256 = Str(a->analysis_sha256());
  }
  return Status::Ok();
}

}  // namespace headwise
