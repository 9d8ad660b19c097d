#include "converter/src/sinusoids.h"

#include <cmath>
#include <cstddef>

namespace headwise::convert {

std::vector<float> SinusoidalPositions(uint32_t positions, uint32_t dim) {
  const uint32_t half = dim / 2;
  std::vector<float> table(static_cast<size_t>(positions) * dim);
  for (uint32_t p = 0; p < positions; ++p) {
    float* row = table.data() + static_cast<size_t>(p) * dim;
    for (uint32_t j = 0; j < half; ++j) {
      // Hugging Face: pos / np.power(10000, 2 * (j // 2) / dim) over all j, then the even
      // columns feed sin and the odd ones cos; column 2j and 2j+1 share the angle below.
      const double angle = p / std::pow(10000.0, 2.0 * j / dim);
      row[j] = static_cast<float>(std::sin(angle));
      row[half + j] = static_cast<float>(std::cos(angle));
    }
  }
  return table;
}

}  // namespace headwise::convert
