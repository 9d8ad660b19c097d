#include "converter/src/json_util.h"

#include <set>
#include <vector>

namespace headwise::convert {

using nlohmann::json;

Result<json> ParseJsonStrict(std::string_view text, const std::string& where) {
  // One set of keys per open object; the first repeated key is remembered and reported after
  // parsing (a parser callback cannot return an error of its own).
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  const json::parser_callback_t callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open_objects.empty() && parsed.is_string() &&
            !open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  json value;
  try {
    value = json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception& e) {  // nlohmann reports errors as exceptions only
    return InvalidCheckpoint(where + ": invalid JSON (nlohmann: " + e.what() + ")");
  }
  if (!duplicate.empty()) {
    return InvalidCheckpoint(where + ": duplicate key '" + duplicate +
                             "' (each key may appear once per object)");
  }
  return value;
}

std::string JsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a non-integer number";
    case json::value_t::binary: return "binary data";
    case json::value_t::discarded: return "nothing";
  }
  return "an unknown value";
}

bool JsonToInt(const json& value, int64_t lo, int64_t hi, int64_t* out) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (hi < 0 || v > static_cast<uint64_t>(hi)) return false;
    if (static_cast<int64_t>(v) < lo) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
  }
  return false;
}

}  // namespace headwise::convert
