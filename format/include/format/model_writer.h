// format/model_writer.h: turns the model IR (format/model_ir.h) into a .hwm file. The writer
// validates the whole IR (ValidateModelSpec) before producing a byte.
//
// Ownership: the writer copies from the spec; the spec may be freed afterwards.
#ifndef HEADWISE_FORMAT_MODEL_WRITER_H_
#define HEADWISE_FORMAT_MODEL_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "format/model_ir.h"
#include "headwise/status.hpp"

namespace headwise {

// The complete file image (size-prefixed flatbuffer + 64-aligned data segment + checksum).
Result<std::vector<uint8_t>> SerializeModel(const ModelSpec& spec);

// Validates, serializes and writes atomically (temporary file + rename).
Status WriteModelFile(const ModelSpec& spec, const std::string& path,
                      const AtomicWriteOptions& options);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_MODEL_WRITER_H_
