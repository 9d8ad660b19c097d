// converter/src/json_util.h: strict JSON parsing for the checkpoint's JSON files
// (config.json, vocab.json, the safetensors header).
//
// Strict means: the whole text is one JSON value, and no object repeats a key (nlohmann keeps
// the last of repeated keys silently; a checkpoint that repeats a tensor name or a vocabulary
// piece is broken and must say so).
#ifndef HEADWISE_CONVERTER_JSON_UTIL_H_
#define HEADWISE_CONVERTER_JSON_UTIL_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "headwise/status.hpp"

namespace headwise::convert {

// Errors (kInvalidCheckpoint, prefixed with `where`): "invalid JSON (<nlohmann message>)",
// "duplicate key '<key>'".
Result<nlohmann::json> ParseJsonStrict(std::string_view text, const std::string& where);

// A JSON value's type for messages: "a string", "an integer", "null", ...
std::string JsonTypeName(const nlohmann::json& value);

// True when `value` is an integer (not a bool, not a float) in [lo, hi]; stores it in `out`.
bool JsonToInt(const nlohmann::json& value, int64_t lo, int64_t hi, int64_t* out);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_JSON_UTIL_H_
