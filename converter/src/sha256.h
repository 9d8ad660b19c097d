// converter/src/sha256.h: SHA-256 (FIPS 180-4), for the provenance hash of model.safetensors.
//
//   Sha256 h; h.Update(data, size); ...; std::string hex = h.FinishHex();
//
// Incremental; Finish* may be called once, after which the object must not be updated.
#ifndef HEADWISE_CONVERTER_SHA256_H_
#define HEADWISE_CONVERTER_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace headwise::convert {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  std::array<uint8_t, 32> Finish();
  // 64 lowercase hex digits.
  std::string FinishHex();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// SHA-256 of `size` bytes as 64 lowercase hex digits.
std::string Sha256Hex(const void* data, size_t size);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_SHA256_H_
