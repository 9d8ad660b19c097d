// The packed int8 layout (int8_packed.h) and the table of the kernels that read it.
#include "kernels/int8_packed.h"

#include <cstring>

#include "kernels/int8_gemm_avx2_packed.h"
#include "kernels/int8_gemm_avx512vnni_packed.h"

namespace headwise::kernels {

size_t Int8VnniPackedBytes(size_t n, size_t k) {
  return (n + kVnniTile - 1) / kVnniTile * ((k + 3) / 4) * kVnniGroupBytes;
}

void PackInt8Vnni(const int8_t* w, size_t n, size_t k, uint8_t* out) {
  const size_t k4 = (k + 3) / 4, padded = (n + kVnniTile - 1) / kVnniTile * kVnniTile;
  for (size_t o = 0; o < padded; ++o) {
    for (size_t g = 0; g < k4; ++g) {
      uint8_t* dst = out + Int8VnniPackedOffset(o, g, k4);
      for (size_t b = 0; b < 4; ++b) {
        const size_t i = 4 * g + b;
        const int v = o < n && i < k ? w[o * k + i] : 0;
        dst[b] = static_cast<uint8_t>(v + 128);
      }
    }
  }
}

void GatherInt8VnniPacked(const uint8_t* packed, size_t k, const int32_t* ids, size_t count,
                          uint8_t* out) {
  const size_t k4 = (k + 3) / 4, padded = (count + kVnniTile - 1) / kVnniTile * kVnniTile;
  for (size_t j = 0; j < padded; ++j) {
    if (j >= count) {  // past the last row: w = 0
      for (size_t g = 0; g < k4; ++g) std::memset(out + Int8VnniPackedOffset(j, g, k4), 128, 4);
      continue;
    }
    const size_t o = static_cast<size_t>(ids[j]);
    for (size_t g = 0; g < k4; ++g) {
      std::memcpy(out + Int8VnniPackedOffset(j, g, k4), packed + Int8VnniPackedOffset(o, g, k4), 4);
    }
  }
}

namespace {

// A packed kernel and the int8 family (int8_gemm.h's name) whose dispatch runs it.
struct Entry {
  const char* family;
  bool (*available)();
  Int8PackedKernel kernel;
};

const Entry kPacked[] = {
#ifdef HEADWISE_INT8_AVX512VNNI
    {"avx512-vnni", Int8Avx512VnniPackedAvailable, {"avx512-vnni-packed", Int8GemmAvx512VnniPacked}},
#endif
#ifdef HEADWISE_INT8_AVX2
    {"avx2", Int8Avx2PackedAvailable, {"avx2-packed", Int8GemmAvx2Packed}},
#endif
    {"", nullptr, {}},  // keeps the array non-empty off x86
};

const Int8PackedKernel& Choose() {
  static const Int8PackedKernel none;
  const char* family = Int8GemmKernelName();
  for (const Entry& e : kPacked) {
    if (e.available != nullptr && std::strcmp(e.family, family) == 0 && e.available()) {
      return e.kernel;
    }
  }
  return none;
}

}  // namespace

const Int8PackedKernel& Int8PackedKernelHere() {
  static const Int8PackedKernel& chosen = Choose();
  return chosen;
}

}  // namespace headwise::kernels
