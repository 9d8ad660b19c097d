// converter/src/safetensors_reader.h: parses a safetensors file image.
//
// Format: an 8-byte little-endian header length N, N bytes of JSON header
//   {"<name>": {"dtype": "F32"|"F16"|"BF16", "shape": [d0, ...], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"<key>": "<string>", ...} (optional)}
// then the data region; offsets are relative to the data region's start (byte 8 + N).
//
// Rejected, each with a message naming `where`, the tensor and what was expected and found
// (kInvalidCheckpoint): a file shorter than 8 bytes, a header length beyond the file or above
// 100 MiB, invalid JSON, repeated names, a header entry that is not an object or lacks a field,
// an unsupported dtype (named, e.g. "F64"), a shape that is not a list of non-negative integers,
// data_offsets out of order or beyond the data region, two tensors whose bytes overlap, and a
// byte size different from product(shape) * dtype size. Gaps between tensors are allowed.
//
// Ownership: tensors point into the caller's buffer and are valid while it lives.
#ifndef HEADWISE_CONVERTER_SAFETENSORS_READER_H_
#define HEADWISE_CONVERTER_SAFETENSORS_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "headwise/status.hpp"

namespace headwise::convert {

enum class SafetensorsDType : uint8_t { kF32, kF16, kBF16 };

// "F32", "F16", "BF16".
const char* SafetensorsDTypeName(SafetensorsDType dtype);

struct SafetensorsTensor {
  std::string name;
  SafetensorsDType dtype = SafetensorsDType::kF32;
  std::vector<uint64_t> shape;
  const uint8_t* data = nullptr;  // little-endian elements, not necessarily aligned
  uint64_t num_elements = 0;
};

struct SafetensorsContents {
  std::vector<SafetensorsTensor> tensors;  // sorted by name
  std::map<std::string, std::string> metadata;

  // nullptr when absent.
  const SafetensorsTensor* Find(const std::string& name) const;
};

// Largest header accepted, as the reference implementation.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;

Result<SafetensorsContents> ParseSafetensors(const uint8_t* bytes, size_t size,
                                             const std::string& where);

// The tensor's values widened exactly to float (F16 and BF16 are subsets of F32).
std::vector<float> SafetensorsToFloat(const SafetensorsTensor& tensor);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_SAFETENSORS_READER_H_
