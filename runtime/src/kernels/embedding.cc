#include "kernels/embedding.h"

#include <cmath>

#include "common/half.h"
#include "kernels/int8_packed.h"
#include "kernels/vec.h"

namespace headwise::kernels {

void SinusoidalPositions(size_t num_positions, size_t dim, float* table) {
  const size_t sin_cols = (dim + 1) / 2;  // columns 0, 2, 4, ... of the angle matrix
  for (size_t p = 0; p < num_positions; ++p) {
    float* row = table + p * dim;
    for (size_t j = 0; j < dim; ++j) {
      // Column j of the output: sin of angle column 2j, or cos of angle column 2(j-sin_cols)+1;
      // angle column c uses exponent 2 * (c / 2) / dim.
      const bool is_sin = j < sin_cols;
      const size_t c = is_sin ? 2 * j : 2 * (j - sin_cols) + 1;
      const double angle = static_cast<double>(p) /
                           std::pow(10000.0, static_cast<double>(2 * (c / 2)) / static_cast<double>(dim));
      row[j] = static_cast<float>(is_sin ? std::sin(angle) : std::cos(angle));
    }
  }
}

void EmbedTokens(const float* embed, const int32_t* ids, size_t rows, size_t dim, float scale,
                 const float* positions, size_t position_stride, float* out) {
  for (size_t r = 0; r < rows; ++r) {
    const float* e = embed + static_cast<size_t>(ids[r]) * dim;
    const float* p = positions + r * position_stride;
    float* o = out + r * dim;
    size_t j = 0;
    for (; j + 4 <= dim; j += 4) StoreV4(o + j, LoadV4(e + j) * scale + LoadV4(p + j));
    for (; j < dim; ++j) o[j] = e[j] * scale + p[j];
  }
}

void EmbedTokensF16(const uint16_t* embed, const int32_t* ids, size_t rows, size_t dim,
                    float scale, const float* positions, size_t position_stride, float* out) {
  for (size_t r = 0; r < rows; ++r) {
    const uint16_t* e = embed + static_cast<size_t>(ids[r]) * dim;
    const float* p = positions + r * position_stride;
    float* o = out + r * dim;
    for (size_t j = 0; j < dim; ++j) o[j] = F16ToFloat(e[j]) * scale + p[j];
  }
}

void EmbedTokensI8(const int8_t* embed, const float* row_scale, const int32_t* ids, size_t rows,
                   size_t dim, float scale, const float* positions, size_t position_stride,
                   float* out) {
  for (size_t r = 0; r < rows; ++r) {
    const size_t id = static_cast<size_t>(ids[r]);
    const int8_t* e = embed + id * dim;
    const float s = row_scale[id];
    const float* p = positions + r * position_stride;
    float* o = out + r * dim;
    for (size_t j = 0; j < dim; ++j) o[j] = (static_cast<float>(e[j]) * s) * scale + p[j];
  }
}

void EmbedTokensI8Packed(const uint8_t* packed, const float* row_scale, const int32_t* ids,
                         size_t rows, size_t dim, float scale, const float* positions,
                         size_t position_stride, float* out) {
  // Row id's 4-byte group g lies kVnniGroupBytes after group g - 1 (Int8VnniPackedOffset).
  const size_t k4 = (dim + 3) / 4;
  for (size_t r = 0; r < rows; ++r) {
    const size_t id = static_cast<size_t>(ids[r]);
    const float s = row_scale[id];
    const float* p = positions + r * position_stride;
    float* o = out + r * dim;
    const uint8_t* row = packed + Int8VnniPackedOffset(id, 0, k4);
    for (size_t j = 0; j < dim; ++j) {
      const int w = static_cast<int>(row[j / 4 * kVnniGroupBytes + j % 4]) - 128;
      o[j] = (static_cast<float>(w) * s) * scale + p[j];
    }
  }
}

}  // namespace headwise::kernels
