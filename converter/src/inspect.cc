#include "converter/src/inspect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "common/mapped_file.h"
#include "format/model_file.h"
#include "format/model_layout.h"
#include "format/schema_map.h"

namespace headwise::convert {
namespace {

using nlohmann::json;
namespace sc = ::headwise::schema;

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

template <typename T>
std::vector<T> Vec(const flatbuffers::Vector<T>* v) {
  return v != nullptr ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

// Elements of a vector of tables (empty when the vector is absent).
template <typename T>
std::vector<const T*> Tables(const flatbuffers::Vector<flatbuffers::Offset<T>>* v) {
  std::vector<const T*> out;
  if (v != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) out.push_back(v->Get(i));
  }
  return out;
}

std::string Hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

struct Layout {
  ModelConfig config;
  std::vector<BlockLayout> blocks;  // in file order, one per m.attention() entry
  ModelNotes notes;                 // gates, analysis, provenance (checked by NotesFromSchema)
  std::optional<ShortlistFromFile> shortlist;  // checked by ShortlistFromSchema
};

// Layout rules on top of the structural verification: blocks (with their gate and analysis
// lengths: NotesFromSchema) and tensor names/shapes.
Result<Layout> CheckLayout(const sc::Model& m, const sc::ModelConfig& config) {
  HW_ASSIGN_OR_RETURN(const ModelConfig layout, ConfigFromSchema(config));
  HW_ASSIGN_OR_RETURN(std::vector<BlockLayout> blocks, BlocksFromSchema(m));
  HW_ASSIGN_OR_RETURN(ModelNotes notes, NotesFromSchema(m, blocks));
  HW_RETURN_IF_ERROR(ValidateLayout(layout, blocks));
  HW_ASSIGN_OR_RETURN(std::optional<ShortlistFromFile> shortlist,
                      ShortlistFromSchema(m, layout.vocab_size));
  std::map<std::string, std::vector<uint32_t>> found;
  for (const sc::Tensor* t : Tables(m.tensors())) {
    if (t == nullptr) return InvalidModel("tensor missing");
    if (!found.emplace(Str(t->name()), Vec(t->shape())).second) {
      return InvalidModel("tensor " + Str(t->name()) + " appears twice");
    }
  }
  const std::vector<ExpectedTensor> expected = ExpectedTensors(layout, blocks);
  for (const ExpectedTensor& e : expected) {
    auto it = found.find(e.name);
    if (it == found.end()) return InvalidModel(e.name + ": missing");
    if (it->second != e.shape) {
      return InvalidModel(e.name + ": expected " + ShapeToString(e.shape) + ", found " +
                          ShapeToString(it->second));
    }
  }
  if (found.size() != expected.size()) {
    return InvalidModel(std::to_string(found.size() - expected.size()) +
                        " tensor(s) not part of the layout");
  }
  return Layout{layout, std::move(blocks), std::move(notes), shortlist};
}

json ConfigJson(const ModelConfig& c) {
  return {{"d_model", c.d_model},
          {"encoder_layers", c.encoder_layers},
          {"decoder_layers", c.decoder_layers},
          {"encoder_attention_heads", c.encoder_attention_heads},
          {"decoder_attention_heads", c.decoder_attention_heads},
          {"encoder_ffn_dim", c.encoder_ffn_dim},
          {"decoder_ffn_dim", c.decoder_ffn_dim},
          {"activation", ActivationName(c.activation)},
          {"vocab_size", c.vocab_size},
          {"max_position_embeddings", c.max_position_embeddings},
          {"pad_token_id", c.pad_token_id},
          {"eos_token_id", c.eos_token_id},
          {"decoder_start_token_id", c.decoder_start_token_id},
          {"unk_token_id", c.unk_token_id},
          {"scale_embedding", c.scale_embedding},
          {"share_encoder_decoder_embeddings", c.share_encoder_decoder_embeddings},
          {"tie_word_embeddings", c.tie_word_embeddings},
          {"layer_norm_eps", c.layer_norm_eps}};
}

// A stored statistic: NaN (not computed) -> null.
json Stat(float v) { return std::isnan(v) ? json() : json(v); }

// One entry per source head, or an empty array when the block has no analysis.
json AnalysisJson(const BlockLayout& b, const std::vector<HeadAnalysisSpec>& analysis) {
  json heads = json::array();
  for (const HeadAnalysisSpec& h : analysis) {
    const bool is_kept =
        std::find(b.kept_heads.begin(), b.kept_heads.end(), h.source_head) != b.kept_heads.end();
    heads.push_back({{"head", h.source_head},
                     {"kept", is_kept},
                     {"relevance", Stat(h.relevance)},
                     {"confidence", Stat(h.confidence)},
                     {"michel", Stat(h.michel)},
                     {"roles", h.roles}});
  }
  return heads;
}

// A right-aligned cell of `width` characters: the value with 3 decimals, or "-" for null.
std::string Cell(const json& v, int width) {
  char buf[48];
  if (v.is_null()) {
    std::snprintf(buf, sizeof buf, "%*s", width, "-");
  } else {
    std::snprintf(buf, sizeof buf, "%*.3f", width, v.get<double>());
  }
  return buf;
}

}  // namespace

Result<json> InspectModelFile(const std::string& path) {
  HW_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  Result<ModelFileView> verified = VerifyModelFile(file.data(), file.size(), true);
  if (!verified.ok()) return verified.status().WithContext(path);
  const ModelFileView& view = *verified;
  if (view.model == nullptr || view.model->config() == nullptr) {
    return InvalidModel(path + ": the model has no config table");
  }
  const sc::Model& m = *view.model;
  const sc::ModelConfig& config = *m.config();
  Result<Layout> checked = CheckLayout(m, config);
  if (!checked.ok()) return checked.status().WithContext(path);
  const Layout& layout = *checked;

  json report;
  report["file"] = path;
  report["file_bytes"] = file.size();
  report["format_version"] = m.format_version();
  report["config"] = ConfigJson(layout.config);

  const ModelNotes& notes = layout.notes;
  json attention = json::array();
  uint64_t kept = 0, total = 0;
  const std::vector<const sc::AttentionBlock*> blocks = Tables(m.attention());
  for (size_t i = 0; i < blocks.size(); ++i) {
    const sc::AttentionBlock* a = blocks[i];
    const AttentionKind kind = layout.blocks[i].kind;
    attention.push_back({{"block", BlockPrefix(kind, a->layer())},
                         {"kind", AttentionKindJsonName(kind)},
                         {"layer", a->layer()},
                         {"num_heads", a->num_heads()},
                         {"original_num_heads", a->original_num_heads()},
                         {"head_dim", a->head_dim()},
                         {"kept_heads", Vec(a->kept_heads())},
                         {"gate_log_alpha", notes.gate_log_alpha[i]},
                         {"analysis", AnalysisJson(layout.blocks[i], notes.head_analysis[i])}});
    kept += a->num_heads();
    total += a->original_num_heads();
  }
  report["attention"] = attention;
  bool gated = false;
  for (const std::vector<float>& g : notes.gate_log_alpha) gated = gated || !g.empty();
  report["gate_rule"] = gated ? json(GateRuleName(notes.gate_rule)) : json(nullptr);
  if (const std::optional<AnalysisInfoSpec>& info = notes.analysis_info; info.has_value()) {
    report["analysis"] = {{"relevance_rule", info->relevance_rule},
                          {"data", info->data},
                          {"analysis_sha256", info->analysis_sha256}};
  } else {
    report["analysis"] = nullptr;
  }
  report["heads"] = {{"kept", kept}, {"total", total}};
  if (const std::optional<ShortlistFromFile>& sl = layout.shortlist; sl.has_value()) {
    report["shortlist"] = {{"frequent", sl->view.num_frequent},
                           {"sources", sl->stats.sources},
                           {"longest", sl->stats.longest},
                           {"entries", sl->view.num_targets},
                           {"description", std::string(sl->view.description)}};
  } else {
    report["shortlist"] = nullptr;
  }

  uint64_t tensor_bytes = 0;
  const std::vector<const sc::Tensor*> tensors = Tables(m.tensors());
  json dtypes = json::object();
  for (const sc::Tensor* t : tensors) {
    tensor_bytes += t->size();
    const std::string dtype = DTypeName(*FromSchema(t->dtype()));  // verified known
    dtypes[dtype] = dtypes.value(dtype, 0) + 1;
  }
  report["tensors"] = {{"count", tensors.size()}, {"bytes", tensor_bytes}, {"dtypes", dtypes}};
  report["data"] = {{"offset", m.data_offset()},
                    {"size", m.data_size()},
                    {"checksum", Hex64(m.data_checksum())},
                    {"checksum_ok", true}};

  const sc::Tokenizer* tok = m.tokenizer();
  report["tokenizer"] = {
      {"source_spm_bytes", tok && tok->source_spm() ? tok->source_spm()->size() : 0},
      {"target_spm_bytes", tok && tok->target_spm() ? tok->target_spm()->size() : 0},
      {"vocab_size", tok && tok->vocab() ? tok->vocab()->size() : 0}};

  report["provenance"] = {{"source_checkpoint_sha256", notes.source_checkpoint_sha256},
                          {"source_checkpoint_name", notes.source_checkpoint_name},
                          {"converter_version", notes.converter_version},
                          {"keep_heads_spec", notes.keep_heads_spec},
                          {"source_dtype", notes.source_dtype}};
  return report;
}

std::string FormatInspectText(const json& r) {
  std::ostringstream out;
  const json& c = r["config"];
  out << r["file"].get<std::string>() << ": headwise model, format version "
      << r["format_version"] << ", " << r["file_bytes"] << " bytes\n";
  out << "config\n";
  for (const auto& [key, value] : c.items()) out << "  " << key << ": " << value.dump() << "\n";
  out << "attention heads kept: " << r["heads"]["kept"] << " of " << r["heads"]["total"] << "\n";
  if (r["gate_rule"].is_string()) {
    const bool continuous = r["gate_rule"] == "continuous";
    out << "gate rule: " << r["gate_rule"].get<std::string>()
        << (continuous ? " (heads with clamp(sigmoid(log_alpha) * 1.2 - 0.1, 0, 1) > 0 kept, "
                         "their out_proj columns scaled by it)"
                       : " (heads with log_alpha > 0 kept, unscaled)")
        << (r["provenance"]["keep_heads_spec"] != "" ? "; overridden by the keep-heads spec"
                                                      : "")
        << "\n";
  }
  for (const json& a : r["attention"]) {
    std::string indices;
    for (const json& h : a["kept_heads"]) indices += (indices.empty() ? "" : ",") + h.dump();
    out << "  " << a["block"].get<std::string>() << ": " << a["num_heads"] << "/"
        << a["original_num_heads"] << " [" << indices << "]";
    if (!a["gate_log_alpha"].empty()) {
      out << " gates";
      for (const json& g : a["gate_log_alpha"]) {
        char buf[32];
        std::snprintf(buf, sizeof buf, " %.3g", g.get<double>());
        out << buf;
      }
    }
    out << "\n";
  }
  if (!r["analysis"].is_null()) {
    const json& info = r["analysis"];
    out << "per-head analysis (relevance rule " << info["relevance_rule"].get<std::string>()
        << "; " << info["data"].get<std::string>() << "; analysis.json sha256 "
        << info["analysis_sha256"].get<std::string>() << "); * = kept\n";
    out << "  block                                 head  relevance  confidence  michel  roles\n";
    for (const json& a : r["attention"]) {
      for (const json& h : a["analysis"]) {
        char head[16];
        std::snprintf(head, sizeof head, "%4d%s", h["head"].get<int>(),
                      h["kept"].get<bool>() ? "*" : " ");
        std::string roles;
        for (const json& role : h["roles"]) {
          roles += (roles.empty() ? "" : ",") + role.get<std::string>();
        }
        char block[48];
        std::snprintf(block, sizeof block, "%-36s", a["block"].get<std::string>().c_str());
        out << "  " << block << head << "  " << Cell(h["relevance"], 9) << "  "
            << Cell(h["confidence"], 10) << "  " << Cell(h["michel"], 6) << "  "
            << (roles.empty() ? "-" : roles) << "\n";
      }
    }
  }
  if (const json& sl = r["shortlist"]; !sl.is_null()) {
    out << "vocabulary shortlist: " << sl["frequent"] << " frequent pieces, lists for "
        << sl["sources"] << " source pieces (longest " << sl["longest"] << ", " << sl["entries"]
        << " entries)";
    const std::string description = sl["description"].get<std::string>();
    out << (description.empty() ? "" : "; " + description) << "\n";
  } else {
    out << "vocabulary shortlist: none\n";
  }
  out << "tensors: " << r["tensors"]["count"] << ", " << r["tensors"]["bytes"] << " bytes (";
  std::string sep;
  for (const auto& [dtype, count] : r["tensors"]["dtypes"].items()) {
    out << sep << dtype << " " << count.dump();
    sep = ", ";
  }
  out << ")\n";
  out << "data segment: offset " << r["data"]["offset"] << ", " << r["data"]["size"]
      << " bytes, checksum " << r["data"]["checksum"].get<std::string>() << " (verified)\n";
  const json& t = r["tokenizer"];
  out << "tokenizer: source.spm " << t["source_spm_bytes"] << " bytes, target.spm "
      << t["target_spm_bytes"] << " bytes, vocab " << t["vocab_size"] << " pieces\n";
  const json& p = r["provenance"];
  out << "provenance\n";
  for (const auto& [key, value] : p.items()) {
    out << "  " << key << ": " << value.get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace headwise::convert
