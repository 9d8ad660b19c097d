#include "sampler.h"

#include <algorithm>
#include <cmath>

namespace headwise {

uint64_t SampleMix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SampleKey(uint64_t seed, const TokenSpan& source) {
  uint64_t key = SampleMix(seed);
  for (size_t i = 0; i < source.size; ++i) {
    key = SampleMix(key ^ static_cast<uint64_t>(static_cast<uint32_t>(source.ids[i])));
  }
  return key;
}

double SampleUniform(uint64_t key, size_t step) {
  return static_cast<double>(SampleMix(key + static_cast<uint64_t>(step)) >> 11) * 0x1.0p-53;
}

int32_t DrawToken(const float* x, size_t V, const SearchOptions& options, int32_t excluded,
                  double u, int32_t fallback, const SampleScratch& scratch) {
  // 1. Candidates (ascending id) and their largest logit.
  int32_t* order = scratch.order;
  size_t n = 0;
  float max = -INFINITY;
  for (size_t v = 0; v < V; ++v) {
    if (!std::isfinite(x[v]) || static_cast<int32_t>(v) == excluded) continue;
    order[n++] = static_cast<int32_t>(v);
    max = std::max(max, x[v]);
  }
  if (n == 0) return fallback;
  // 3. (first part) The top_k cut, which needs no weights.
  const auto higher = [x](int32_t a, int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); };
  size_t sorted = 0;  // order[0, sorted) is the head in logit order
  if (options.top_k > 0) {
    const size_t k = std::min(n, static_cast<size_t>(options.top_k));
    std::partial_sort(order, order + k, order + n, higher);
    n = sorted = k;
  }
  // 2. The weights of the cut list, by id, and `total`, their sum: in ascending id order
  // without top_k, else in logit order.
  const double m = static_cast<double>(max);
  const double t = static_cast<double>(options.temperature);
  double* w = scratch.weight;
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const int32_t v = order[i];
    w[v] = std::exp((static_cast<double>(x[v]) - m) / t);
    total += w[v];
  }
  // 3. (second part) The top_p cut.
  if (options.top_p < 1.0f) {
    // The shortest head in logit order reaching top_p * total, sorting only as much of the
    // order as it needs: each partial_sort of the rest extends the sorted head.
    const double need = static_cast<double>(options.top_p) * total;
    double sum = 0.0;
    size_t keep = 0;
    while (keep < n) {
      if (keep == sorted) {
        const size_t grow = std::min(n, std::max<size_t>(64, 2 * sorted));
        std::partial_sort(order + sorted, order + grow, order + n, higher);
        sorted = grow;
      }
      sum += w[order[keep++]];
      if (sum >= need) break;
    }
    n = keep;
    total = sum;
  }
  // 4. The draw.
  const double target = u * total;
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    sum += w[order[i]];
    if (sum > target) return order[i];
  }
  return order[n - 1];
}

}  // namespace headwise
