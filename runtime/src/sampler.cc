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
  size_t n = 0;
  float max = -INFINITY;
  for (size_t v = 0; v < V; ++v) {
    if (!std::isfinite(x[v]) || static_cast<int32_t>(v) == excluded) continue;
    scratch.order[n++] = static_cast<int32_t>(v);
    max = std::max(max, x[v]);
  }
  if (n == 0) return fallback;
  // 3. Order and cut (the weights follow the order).
  const bool ranked = options.top_k > 0 || options.top_p < 1.0f;
  if (ranked) {
    const auto higher = [x](int32_t a, int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); };
    const size_t k = options.top_k > 0 ? std::min(n, static_cast<size_t>(options.top_k)) : n;
    std::partial_sort(scratch.order, scratch.order + k, scratch.order + n, higher);
    n = k;
  }
  // 2. Weights, and their sum in order.
  const double m = static_cast<double>(max);
  const double t = static_cast<double>(options.temperature);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double w = std::exp((static_cast<double>(x[scratch.order[i]]) - m) / t);
    scratch.weight[i] = w;
    total += w;
  }
  if (options.top_p < 1.0f) {
    const double need = static_cast<double>(options.top_p) * total;
    double sum = 0.0;
    size_t keep = 0;
    while (keep < n) {
      sum += scratch.weight[keep++];
      if (sum >= need) break;
    }
    n = keep;
    total = sum;
  }
  // 4. The draw.
  const double target = u * total;
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    sum += scratch.weight[i];
    if (sum > target) return scratch.order[i];
  }
  return scratch.order[n - 1];
}

}  // namespace headwise
