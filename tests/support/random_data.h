// tests/support/random_data.h: deterministic random inputs for the tests and the benchmarks.
// Header only. The values depend on the seed and the standard library (libstdc++ here), never on
// the machine, the vector width or the thread count.
#ifndef HEADWISE_TESTS_SUPPORT_RANDOM_DATA_H_
#define HEADWISE_TESTS_SUPPORT_RANDOM_DATA_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace headwise::testing {

// n floats drawn uniformly from [lo, hi) by std::mt19937(seed).
inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// n floats drawn uniformly from [-scale, scale).
inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float scale) {
  return RandomFloats(n, seed, -scale, scale);
}

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_SUPPORT_RANDOM_DATA_H_
