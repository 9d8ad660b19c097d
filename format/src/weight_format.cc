#include <algorithm>
#include <cmath>

#include "format/weight_format.h"

namespace headwise {

void ApplyWeightFormat(WeightFormat format, ModelSpec* spec) {
  const DType narrow = MatrixDType(format);
  for (TensorSpec& t : spec->tensors) {
    // Matrices multiply activations (or are looked up row by row); vectors and the [1, V]
    // logits bias are added and stay exact.
    const bool matrix = t.shape.size() == 2 && t.name != "final_logits_bias";
    t.dtype = matrix ? narrow : DType::kF32;
  }
}

std::vector<float> QuantizeRowsI8(const float* data, size_t rows, size_t cols,
                                  std::vector<int8_t>* q) {
  std::vector<float> scales(rows);
  q->resize(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    const float* row = data + r * cols;
    float max_abs = 0.0f;
    for (size_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
    const float scale = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
    scales[r] = scale;
    for (size_t c = 0; c < cols; ++c) {
      const float v = std::nearbyint(row[c] / scale);
      (*q)[r * cols + c] = static_cast<int8_t>(std::min(127.0f, std::max(-127.0f, v)));
    }
  }
  return scales;
}

}  // namespace headwise
