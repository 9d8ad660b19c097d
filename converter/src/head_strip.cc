#include "converter/src/head_strip.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace headwise::convert {

std::vector<float> KeepHeadRows(const std::vector<float>& m, uint32_t row_width, uint32_t head_dim,
                                const std::vector<uint32_t>& kept) {
  const size_t head_block = static_cast<size_t>(head_dim) * row_width;
  std::vector<float> out;
  out.reserve(kept.size() * head_block);
  for (uint32_t h : kept) {
    const auto begin = m.begin() + static_cast<std::ptrdiff_t>(h * head_block);
    out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(head_block));
  }
  return out;
}

std::vector<float> KeepHeadColumns(const std::vector<float>& m, uint32_t rows, uint32_t head_dim,
                                   const std::vector<uint32_t>& kept) {
  const size_t cols = rows == 0 ? 0 : m.size() / rows;
  std::vector<float> out;
  out.reserve(static_cast<size_t>(rows) * kept.size() * head_dim);
  for (size_t r = 0; r < rows; ++r) {
    const auto row = m.begin() + static_cast<std::ptrdiff_t>(r * cols);
    for (uint32_t h : kept) {
      const auto begin = row + static_cast<std::ptrdiff_t>(static_cast<size_t>(h) * head_dim);
      out.insert(out.end(), begin, begin + head_dim);
    }
  }
  return out;
}

float TestTimeGate(GateRule rule, float log_alpha) {
  if (rule == GateRule::kHard) return log_alpha > 0.0f ? 1.0f : 0.0f;
  const float s = 1.0f / (1.0f + std::exp(-log_alpha));
  return std::clamp(s * 1.2f - 0.1f, 0.0f, 1.0f);
}

void ScaleHeadColumns(std::vector<float>* m, uint32_t rows, uint32_t head_dim,
                      const std::vector<float>& scales) {
  const size_t cols = static_cast<size_t>(head_dim) * scales.size();
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) (*m)[r * cols + c] *= scales[c / head_dim];
  }
}

}  // namespace headwise::convert
