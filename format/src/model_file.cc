#include "format/model_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/checksum.h"
#include "format/file_layout.h"
#include "format/schema_map.h"

namespace headwise {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The identifier bytes as text, with anything unprintable escaped, for the error message.
std::string Printable(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      s += static_cast<char>(p[i]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", p[i]);
      s += buf;
    }
  }
  return s;
}

Status VerifyTensor(const schema::Tensor& t, size_t index, uint64_t data_size) {
  const flatbuffers::String* n = t.name();
  const std::string name = n != nullptr ? n->str() : std::string();
  const std::string where = "tensor " + std::to_string(index) + " '" + name + "'";
  const Result<DType> dtype = FromSchema(t.dtype());
  if (!dtype.ok()) return dtype.status().WithContext(where);
  const size_t elem = DTypeSize(*dtype);
  // product(shape) * elem, refusing anything that would wrap around 64 bits.
  uint64_t bytes = elem;
  if (t.shape() != nullptr) {
    for (uint32_t dim : *t.shape()) {
      if (dim != 0 && bytes > UINT64_MAX / dim) {
        return InvalidModel(where + ": shape size overflows 64 bits");
      }
      bytes *= dim;
    }
  }
  if (t.size() != bytes) {
    return InvalidModel(where + ": size " + std::to_string(t.size()) + " bytes, shape and dtype need " +
                        std::to_string(bytes));
  }
  if (t.offset() % kTensorAlignment != 0) {
    return InvalidModel(where + ": offset " + std::to_string(t.offset()) + " is not a multiple of " +
                        std::to_string(kTensorAlignment));
  }
  if (t.offset() > data_size || t.size() > data_size - t.offset()) {
    return InvalidModel(where + ": bytes [" + std::to_string(t.offset()) + ", +" +
                        std::to_string(t.size()) + ") outside the data segment of " +
                        std::to_string(data_size) + " bytes");
  }
  return Status::Ok();
}

}  // namespace

Result<ModelFileView> VerifyModelFile(const uint8_t* bytes, size_t size, bool verify_checksum,
                                      const ChecksumChunkDone& after_chunk) {
  constexpr size_t kHeader = sizeof(flatbuffers::uoffset_t) + 8;  // prefix, root offset, id
  if (bytes == nullptr || size < kHeader) {
    return InvalidModel("file is " + std::to_string(size) + " bytes; a headwise model has at least " +
                        std::to_string(kHeader));
  }
  if (std::memcmp(bytes + 8, kFileIdentifier, 4) != 0) {
    return InvalidModel("not a headwise model: file identifier '" + Printable(bytes + 8, 4) +
                        "', expected '" + kFileIdentifier + "'");
  }
  uint32_t prefix = 0;
  std::memcpy(&prefix, bytes, sizeof prefix);  // little-endian hosts only (as is the format)
  const uint64_t fb_end = uint64_t{prefix} + sizeof(flatbuffers::uoffset_t);
  if (fb_end > size) {
    return InvalidModel("truncated file: the model header says " + std::to_string(fb_end) +
                        " bytes of metadata, the file has " + std::to_string(size));
  }
  flatbuffers::Verifier verifier(bytes, static_cast<size_t>(fb_end));
  if (!schema::VerifySizePrefixedModelBuffer(verifier)) {
    return InvalidModel("corrupt model metadata: the flatbuffers Verifier rejected the header "
                        "table of " + std::to_string(fb_end) + " bytes");
  }
  const schema::Model* model = schema::GetSizePrefixedModel(bytes);
  if (model->format_version() == 0) {
    return InvalidModel("format_version is 0 (missing)");
  }
  if (model->format_version() > kFormatVersion) {
    return Status(ErrorCode::kUnsupportedVersion,
                  "model format version " + std::to_string(model->format_version()) +
                      " is newer than this runtime reads (" + std::to_string(kFormatVersion) + ")");
  }
  const uint64_t off = model->data_offset(), dsize = model->data_size();
  if (off % kTensorAlignment != 0) {
    return InvalidModel("data segment offset " + std::to_string(off) + " is not a multiple of " +
                        std::to_string(kTensorAlignment));
  }
  if (off < fb_end) {
    return InvalidModel("data segment offset " + std::to_string(off) +
                        " overlaps the metadata ending at " + std::to_string(fb_end));
  }
  if (off > size || dsize > size - off) {
    return InvalidModel("truncated file: data segment [" + std::to_string(off) + ", +" +
                        std::to_string(dsize) + ") does not fit in " + std::to_string(size) +
                        " bytes");
  }
  if (const auto* tensors = model->tensors(); tensors != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
      const schema::Tensor* t = tensors->Get(i);
      if (t == nullptr) return InvalidModel("tensor " + std::to_string(i) + " is missing");
      HW_RETURN_IF_ERROR(VerifyTensor(*t, i, dsize));
    }
  }
  ModelFileView view;
  view.model = model;
  view.data = bytes + off;
  view.data_size = dsize;
  if (verify_checksum) {
    uint64_t sum = kFnv1a64Init;
    for (size_t done = 0; done < dsize;) {
      const size_t n = std::min(kChecksumChunkBytes, static_cast<size_t>(dsize) - done);
      sum = Fnv1a64(view.data + done, n, sum);
      if (after_chunk) after_chunk(view.data + done, n);
      done += n;
    }
    if (sum != model->data_checksum()) {
      return Status(ErrorCode::kChecksumMismatch,
                    "data segment checksum " + Hex(sum) + " does not match the " +
                        Hex(model->data_checksum()) + " recorded in the file (corrupted weights)");
    }
  }
  return view;
}

}  // namespace headwise
