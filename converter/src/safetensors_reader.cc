#include "converter/src/safetensors_reader.h"

#include <algorithm>
#include <cstring>

#include "common/half.h"
#include "converter/src/json_util.h"

namespace headwise::convert {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; F32 tensors are copied as they are");

using nlohmann::json;

struct Span {
  uint64_t begin;
  uint64_t end;
  const std::string* name;
};

bool ParseDType(const std::string& text, SafetensorsDType* out) {
  if (text == "F32") *out = SafetensorsDType::kF32;
  else if (text == "F16") *out = SafetensorsDType::kF16;
  else if (text == "BF16") *out = SafetensorsDType::kBF16;
  else return false;
  return true;
}

uint64_t DTypeBytes(SafetensorsDType dtype) { return dtype == SafetensorsDType::kF32 ? 4 : 2; }

Status ParseMetadata(const json& value, const std::string& where,
                     std::map<std::string, std::string>* out) {
  if (!value.is_object()) {
    return InvalidCheckpoint(where + ": __metadata__: expected an object of strings, found " +
                             JsonTypeName(value));
  }
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) {
      return InvalidCheckpoint(where + ": __metadata__." + key + ": expected a string, found " +
                               JsonTypeName(v));
    }
    (*out)[key] = v.get<std::string>();
  }
  return Status::Ok();
}

// One header entry -> tensor (data pointer relative to `data`, range checked by the caller).
Status ParseEntry(const std::string& name, const json& entry, const std::string& where,
                  SafetensorsTensor* tensor, Span* span) {
  const std::string at = where + ": tensor '" + name + "'";
  if (!entry.is_object()) {
    return InvalidCheckpoint(at + ": expected an object {dtype, shape, data_offsets}, found " +
                             JsonTypeName(entry));
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(field)) return InvalidCheckpoint(at + ": missing field '" + field + "'");
  }
  const json& dtype = entry["dtype"];
  if (!dtype.is_string()) {
    return InvalidCheckpoint(at + ": dtype: expected a string, found " + JsonTypeName(dtype));
  }
  if (!ParseDType(dtype.get<std::string>(), &tensor->dtype)) {
    return InvalidCheckpoint(at + ": unsupported dtype '" + dtype.get<std::string>() +
                             "'; expected F32, F16 or BF16");
  }
  const json& shape = entry["shape"];
  if (!shape.is_array()) {
    return InvalidCheckpoint(at + ": shape: expected a list of integers, found " +
                             JsonTypeName(shape));
  }
  uint64_t elements = 1;
  bool overflow = false;
  for (const json& d : shape) {
    int64_t dim = 0;
    if (!JsonToInt(d, 0, INT64_MAX, &dim)) {
      return InvalidCheckpoint(at + ": shape: expected non-negative integers, found " + d.dump());
    }
    const uint64_t u = static_cast<uint64_t>(dim);
    if (u != 0 && elements > UINT64_MAX / u) overflow = true;
    elements *= u;
    tensor->shape.push_back(u);
  }
  const json& offsets = entry["data_offsets"];
  int64_t begin = 0, end = 0;
  if (!offsets.is_array() || offsets.size() != 2 || !JsonToInt(offsets[0], 0, INT64_MAX, &begin) ||
      !JsonToInt(offsets[1], 0, INT64_MAX, &end)) {
    return InvalidCheckpoint(at + ": data_offsets: expected [begin, end] with non-negative "
                             "integers, found " + offsets.dump());
  }
  if (end < begin) {
    return InvalidCheckpoint(at + ": data_offsets: end " + std::to_string(end) +
                             " before begin " + std::to_string(begin));
  }
  const uint64_t bytes = static_cast<uint64_t>(end - begin);
  const uint64_t elem = DTypeBytes(tensor->dtype);
  if (overflow || elements > UINT64_MAX / elem || elements * elem != bytes) {
    return InvalidCheckpoint(at + ": " + std::to_string(bytes) + " bytes in data_offsets, but " +
                             "shape and dtype " + SafetensorsDTypeName(tensor->dtype) + " need " +
                             (overflow || elements > UINT64_MAX / elem
                                  ? std::string("more than 2^64")
                                  : std::to_string(elements * elem)));
  }
  tensor->name = name;
  tensor->num_elements = elements;
  *span = {static_cast<uint64_t>(begin), static_cast<uint64_t>(end), nullptr};
  return Status::Ok();
}

}  // namespace

const char* SafetensorsDTypeName(SafetensorsDType dtype) {
  switch (dtype) {
    case SafetensorsDType::kF32: return "F32";
    case SafetensorsDType::kF16: return "F16";
    case SafetensorsDType::kBF16: return "BF16";
  }
  return "?";
}

const SafetensorsTensor* SafetensorsContents::Find(const std::string& name) const {
  auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                             [](const SafetensorsTensor& t, const std::string& n) { return t.name < n; });
  return it != tensors.end() && it->name == name ? &*it : nullptr;
}

Result<SafetensorsContents> ParseSafetensors(const uint8_t* bytes, size_t size,
                                             const std::string& where) {
  if (size < 8) {
    return InvalidCheckpoint(where + ": truncated file: " + std::to_string(size) +
                             " bytes, a safetensors file starts with an 8-byte header length");
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  if (header_len > size - 8) {
    return InvalidCheckpoint(where + ": corrupt header: header length " +
                             std::to_string(header_len) + " goes beyond the file of " +
                             std::to_string(size) + " bytes");
  }
  if (header_len > kMaxSafetensorsHeaderBytes) {
    return InvalidCheckpoint(where + ": corrupt header: header length " +
                             std::to_string(header_len) + " exceeds the limit of " +
                             std::to_string(kMaxSafetensorsHeaderBytes) + " bytes");
  }
  const std::string header_where = where + " header";
  HW_ASSIGN_OR_RETURN(
      json header,
      ParseJsonStrict(std::string_view(reinterpret_cast<const char*>(bytes) + 8, header_len),
                      header_where));
  if (!header.is_object()) {
    return InvalidCheckpoint(header_where + ": expected a JSON object, found " +
                             JsonTypeName(header));
  }
  const uint8_t* data = bytes + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;

  SafetensorsContents out;
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      HW_RETURN_IF_ERROR(ParseMetadata(entry, where, &out.metadata));
      continue;
    }
    SafetensorsTensor tensor;
    Span span{};
    HW_RETURN_IF_ERROR(ParseEntry(name, entry, where, &tensor, &span));
    if (span.end > data_size) {
      return InvalidCheckpoint(where + ": tensor '" + name + "': data_offsets [" +
                               std::to_string(span.begin) + ", " + std::to_string(span.end) +
                               ") beyond the data region of " + std::to_string(data_size) +
                               " bytes (truncated file?)");
    }
    tensor.data = data + span.begin;
    out.tensors.push_back(std::move(tensor));
    spans.push_back(span);
  }
  for (size_t i = 0; i < spans.size(); ++i) spans[i].name = &out.tensors[i].name;
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  const Span* previous = nullptr;
  for (const Span& s : spans) {
    if (s.begin == s.end) continue;  // empty tensors occupy no bytes
    if (previous != nullptr && s.begin < previous->end) {
      return InvalidCheckpoint(where + ": tensors '" + *previous->name + "' [" +
                               std::to_string(previous->begin) + ", " +
                               std::to_string(previous->end) + ") and '" + *s.name + "' [" +
                               std::to_string(s.begin) + ", " + std::to_string(s.end) +
                               ") overlap");
    }
    previous = &s;
  }
  std::sort(out.tensors.begin(), out.tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) { return a.name < b.name; });
  return out;
}

std::vector<float> SafetensorsToFloat(const SafetensorsTensor& t) {
  std::vector<float> out(static_cast<size_t>(t.num_elements));
  switch (t.dtype) {
    case SafetensorsDType::kF32:
      if (!out.empty()) std::memcpy(out.data(), t.data, out.size() * sizeof(float));  // LE host
      break;
    case SafetensorsDType::kF16:
    case SafetensorsDType::kBF16:
      for (size_t i = 0; i < out.size(); ++i) {
        const uint16_t h = static_cast<uint16_t>(t.data[2 * i] | (t.data[2 * i + 1] << 8));
        out[i] = t.dtype == SafetensorsDType::kF16 ? F16ToFloat(h) : Bf16ToFloat(h);
      }
      break;
  }
  return out;
}

}  // namespace headwise::convert
