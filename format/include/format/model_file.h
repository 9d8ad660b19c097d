// format/model_file.h: structural verification of a .hwm file image (layout in
// schema/headwise.fbs). Run before anything reads a field of an untrusted file.
//
// Checked, in this order, each failure naming what was wrong:
//   size >= 12, identifier "HWM1" at [8, 12), the size prefix within the file, the flatbuffers
//   Verifier over the prefixed buffer, format_version (0 is invalid, newer than kFormatVersion
//   is kUnsupportedVersion naming both), the data segment (64-aligned, after the flatbuffer,
//   inside the file), every tensor (name present, known dtype, offset 64-aligned, offset+size
//   inside the segment, size == product(shape) * dtype size without overflow), and the FNV-1a
//   checksum of the segment when asked.
// Semantic checks (tensor names and shapes against the config) are the runtime's job on top
// of this (format/model_layout.h).
//
// Ownership: the view points into `bytes`; it is valid while the caller's buffer lives.
#ifndef HEADWISE_FORMAT_MODEL_FILE_H_
#define HEADWISE_FORMAT_MODEL_FILE_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "headwise/status.hpp"

namespace headwise {
namespace schema {
struct Model;
}  // namespace schema

struct ModelFileView {
  const schema::Model* model = nullptr;  // the verified root table
  const uint8_t* data = nullptr;         // start of the data segment
  uint64_t data_size = 0;
};

// The checksum reads the data segment in chunks of this many bytes (the last one shorter).
inline constexpr size_t kChecksumChunkBytes = size_t{1} << 20;

// Called after each chunk the checksum has read, in order, with the chunk's bytes: e.g. to drop
// the pages just read from the resident set (MappedFile::ReleasePages), so that verifying a
// mapped file never holds more than one chunk of it resident.
using ChecksumChunkDone = std::function<void(const uint8_t* chunk, size_t size)>;

// Errors: kInvalidModel, kUnsupportedVersion, kChecksumMismatch (only with verify_checksum).
Result<ModelFileView> VerifyModelFile(const uint8_t* bytes, size_t size, bool verify_checksum,
                                      const ChecksumChunkDone& after_chunk = nullptr);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_MODEL_FILE_H_
