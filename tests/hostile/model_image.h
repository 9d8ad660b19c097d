// tests/hostile/model_image.h: an editable .hwm image for the hostile-file tests: in-place
// patches of flatbuffer fields and vector lengths, and loads from exactly-sized 64-aligned
// copies (so AddressSanitizer sees any read past the end). Tests only.
#ifndef HEADWISE_TESTS_HOSTILE_MODEL_IMAGE_H_
#define HEADWISE_TESTS_HOSTILE_MODEL_IMAGE_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "headwise/headwise.hpp"
#include "headwise_generated.h"
#include "tests/runtime/test_model.h"

namespace headwise::testing {

class ModelImage {
 public:
  explicit ModelImage(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}

  std::vector<uint8_t>& bytes() { return bytes_; }
  schema::Model* root() {
    return const_cast<schema::Model*>(schema::GetSizePrefixedModel(bytes_.data()));
  }
  // End of the size-prefixed flatbuffer (start of the padding before the data segment).
  size_t metadata_end() const {
    uint32_t prefix = 0;
    std::memcpy(&prefix, bytes_.data(), sizeof prefix);
    return size_t{prefix} + sizeof prefix;
  }
  size_t data_offset() { return static_cast<size_t>(root()->data_offset()); }

  // Writes `value` at `address`, which points into bytes(). The write goes through the vector
  // at an offset computed out of line: GCC's object-size checks would otherwise take the address
  // for one inside a (1-byte) flatbuffers accessor object.
  template <typename T>
  void Write(const void* address, T value) {
    std::memcpy(bytes_.data() + OffsetOf(address), &value, sizeof value);
  }
  [[gnu::noinline]] size_t OffsetOf(const void* address) const {
    return static_cast<size_t>(static_cast<const uint8_t*>(address) - bytes_.data());
  }
  // Overwrites a scalar field of a table in place (the writer forces every field present).
  template <typename T>
  bool Patch(const void* table, flatbuffers::voffset_t field, T value) {
    if (table == nullptr) return false;
    const uint8_t* at = reinterpret_cast<const flatbuffers::Table*>(table)->GetAddressOf(field);
    if (at == nullptr) return false;
    Write(at, value);
    return true;
  }
  // Shortens a vector in place by rewriting its length prefix (the result stays verifiable).
  template <typename V>
  void SetLength(const V* vector, uint32_t length) {
    Write(vector, length);
  }
  const schema::Tensor* Tensor(const std::string& name) {
    const auto* tensors = root()->tensors();
    for (flatbuffers::uoffset_t i = 0; tensors != nullptr && i < tensors->size(); ++i) {
      const schema::Tensor* t = tensors->Get(i);
      if (t != nullptr && t->name() != nullptr && t->name()->str() == name) return t;
    }
    return nullptr;
  }
  const schema::AttentionBlock* Block(size_t index) {
    const auto* blocks = root()->attention();
    return blocks != nullptr && index < blocks->size() ? blocks->Get(static_cast<flatbuffers::uoffset_t>(index))
                                                       : nullptr;
  }

  // Loads the first `size` bytes from a copy of exactly that size. The copy lives until the
  // next load from this image: drop the previous model (and its Translators) before.
  Result<std::shared_ptr<const Model>> LoadPrefix(size_t size, bool checksum = true) {
    copy_ = std::make_unique<AlignedBytes>(
        std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(size)));
    LoadOptions options;
    options.verify_checksum = checksum;
    return Model::LoadFromMemory(copy_->data(), size, options);
  }
  Result<std::shared_ptr<const Model>> Load(bool checksum = true) {
    return LoadPrefix(bytes_.size(), checksum);
  }

 private:
  std::vector<uint8_t> bytes_;
  std::unique_ptr<AlignedBytes> copy_;  // must outlive the last loaded model
};

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_HOSTILE_MODEL_IMAGE_H_
