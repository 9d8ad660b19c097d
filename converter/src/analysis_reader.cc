#include "converter/src/analysis_reader.h"

#include <cmath>
#include <limits>

#include "common/mapped_file.h"
#include "converter/src/json_util.h"
#include "converter/src/sha256.h"

namespace headwise::convert {
namespace {

using nlohmann::json;

// A number or null (-> NaN); absent counts as null.
Result<float> OptionalNumber(const json& head, const char* key, const std::string& where) {
  auto it = head.find(key);
  if (it == head.end() || it->is_null()) return std::numeric_limits<float>::quiet_NaN();
  if (!it->is_number()) {
    return InvalidCheckpoint(where + "." + key + ": expected a number or null, found " +
                             JsonTypeName(*it));
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max()) {
    return InvalidCheckpoint(where + "." + key + ": expected a finite number, found " +
                             it->dump());
  }
  return static_cast<float>(v);
}

Result<std::vector<std::string>> Roles(const json& head, const std::string& where) {
  std::vector<std::string> roles;
  auto it = head.find("roles");
  if (it == head.end() || it->is_null()) return roles;
  if (!it->is_array()) {
    return InvalidCheckpoint(where + ".roles: expected an array of strings, found " +
                             JsonTypeName(*it));
  }
  for (const json& r : *it) {
    if (!r.is_string()) {
      return InvalidCheckpoint(where + ".roles: expected strings, found " + JsonTypeName(r));
    }
    roles.push_back(r.get<std::string>());
  }
  return roles;
}

Result<std::vector<HeadAnalysisSpec>> ParseBlock(const json& block, const BlockLayout& expected,
                                                 const std::string& where) {
  if (!block.is_object()) {
    return InvalidCheckpoint(where + ": expected an object, found " + JsonTypeName(block));
  }
  const std::string want = std::string(AttentionKindJsonName(expected.kind)) + " layer " +
                           std::to_string(expected.layer);
  const json kind = block.value("kind", json());
  int64_t layer = -1, heads = -1;
  if (!kind.is_string() || kind.get<std::string>() != AttentionKindJsonName(expected.kind) ||
      !JsonToInt(block.value("layer", json()), 0, 1 << 20, &layer) ||
      layer != static_cast<int64_t>(expected.layer)) {
    return InvalidCheckpoint(where + ": expected " + want + ", found " +
                             block.value("kind", json()).dump() + " layer " +
                             block.value("layer", json()).dump());
  }
  if (!JsonToInt(block.value("source_heads", json()), 0, 1 << 20, &heads) ||
      heads != static_cast<int64_t>(expected.original_num_heads)) {
    return InvalidCheckpoint(where + " (" + want + "): source_heads: expected " +
                             std::to_string(expected.original_num_heads) + " (the checkpoint's), "
                             "found " + block.value("source_heads", json()).dump());
  }
  const json list = block.value("heads", json());
  if (!list.is_array() || list.size() != expected.original_num_heads) {
    return InvalidCheckpoint(where + " (" + want + ").heads: expected an array of " +
                             std::to_string(expected.original_num_heads) + " entries, found " +
                             (list.is_array() ? std::to_string(list.size()) + " entries"
                                              : JsonTypeName(list)));
  }
  std::vector<HeadAnalysisSpec> out;
  for (size_t h = 0; h < list.size(); ++h) {
    const std::string at = where + " (" + want + ").heads[" + std::to_string(h) + "]";
    const json& head = list[h];
    int64_t index = -1;
    if (!head.is_object() || !JsonToInt(head.value("head", json()), 0, 1 << 20, &index) ||
        index != static_cast<int64_t>(h)) {
      return InvalidCheckpoint(at + ": expected an object with \"head\": " + std::to_string(h) +
                               ", found " + (head.is_object() ? head.value("head", json()).dump()
                                                              : JsonTypeName(head)));
    }
    HeadAnalysisSpec spec;
    spec.source_head = static_cast<uint32_t>(h);
    HW_ASSIGN_OR_RETURN(spec.relevance, OptionalNumber(head, "relevance", at));
    HW_ASSIGN_OR_RETURN(spec.confidence, OptionalNumber(head, "confidence", at));
    HW_ASSIGN_OR_RETURN(spec.michel, OptionalNumber(head, "michel", at));
    HW_ASSIGN_OR_RETURN(spec.roles, Roles(head, at));
    out.push_back(std::move(spec));
  }
  return out;
}

std::string DataDescription(const json& data) {
  if (!data.is_object()) return "";
  std::string out;
  const auto add = [&out](const std::string& part) {
    if (!part.empty()) out += (out.empty() ? "" : ", ") + part;
  };
  if (data.contains("corpus") && data["corpus"].is_string()) add(data["corpus"].get<std::string>());
  if (data.contains("split") && data["split"].is_string()) {
    add(data["split"].get<std::string>() + " split");
  }
  if (data.contains("sentences") && data["sentences"].is_number_integer()) {
    add(std::to_string(data["sentences"].get<int64_t>()) + " sentences");
  }
  if (data.contains("generation") && data["generation"].is_string()) {
    add(data["generation"].get<std::string>());
  }
  return out;
}

}  // namespace

Result<HeadAnalysisFile> ParseHeadAnalysis(std::string_view text, const std::string& where,
                                           const std::vector<BlockLayout>& blocks,
                                           const std::string& checkpoint_sha256) {
  HW_ASSIGN_OR_RETURN(json doc, ParseJsonStrict(text, where));
  if (!doc.is_object()) {
    return InvalidCheckpoint(where + ": expected a JSON object, found " + JsonTypeName(doc));
  }
  const json format = doc.value("format", json());
  if (!format.is_string() || format.get<std::string>() != "headwise-head-analysis") {
    return InvalidCheckpoint(where + ": format: expected \"headwise-head-analysis\", found " +
                             format.dump());
  }
  int64_t version = 0;
  if (!JsonToInt(doc.value("version", json()), 1, 1, &version)) {
    return InvalidCheckpoint(where + ": version: expected 1 (the version this converter reads), "
                             "found " + doc.value("version", json()).dump());
  }
  const json checkpoint = doc.value("checkpoint", json::object());
  const json sha = checkpoint.is_object() ? checkpoint.value("model_safetensors_sha256", json())
                                          : json();
  if (!sha.is_null()) {
    if (!sha.is_string() || sha.get<std::string>() != checkpoint_sha256) {
      return InvalidCheckpoint(where + ": made for another checkpoint: its "
                               "checkpoint.model_safetensors_sha256 is " + sha.dump() +
                               ", this checkpoint's model.safetensors has " + checkpoint_sha256 +
                               " (rerun `headwise-train analyze` on this checkpoint)");
    }
  }
  const json list = doc.value("blocks", json());
  if (!list.is_array() || list.size() != blocks.size()) {
    return InvalidCheckpoint(where + ": blocks: expected an array of " +
                             std::to_string(blocks.size()) + " attention blocks, found " +
                             (list.is_array() ? std::to_string(list.size()) : JsonTypeName(list)));
  }
  HeadAnalysisFile out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    HW_ASSIGN_OR_RETURN(std::vector<HeadAnalysisSpec> heads,
                        ParseBlock(list[i], blocks[i], where + ": blocks[" + std::to_string(i) + "]"));
    out.blocks.push_back(std::move(heads));
  }
  const json methods = doc.value("methods", json::object());
  if (methods.is_object() && methods.contains("relevance") && methods["relevance"].is_string()) {
    out.info.relevance_rule = methods["relevance"].get<std::string>();
  }
  out.info.data = DataDescription(doc.value("data", json()));
  return out;
}

Result<HeadAnalysisFile> ReadHeadAnalysis(const std::string& path,
                                          const std::vector<BlockLayout>& blocks,
                                          const std::string& checkpoint_sha256) {
  HW_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  HW_ASSIGN_OR_RETURN(HeadAnalysisFile file,
                      ParseHeadAnalysis(text, path, blocks, checkpoint_sha256));
  file.info.analysis_sha256 = Sha256Hex(text.data(), text.size());
  return file;
}

}  // namespace headwise::convert
