// runtime/src/sampler.h: the random draw of one token (headwise.hpp, "Sampling"): the
// counter-based uniform numbers and the draw from a row of logits. Pure functions; the draw
// writes only the caller's scratch and allocates nothing.
#ifndef HEADWISE_RUNTIME_SAMPLER_H_
#define HEADWISE_RUNTIME_SAMPLER_H_

#include <cstddef>
#include <cstdint>

#include "headwise/headwise.hpp"

namespace headwise {

// SplitMix64's output for state z (z is advanced by its increment first).
uint64_t SampleMix(uint64_t z);

// A sentence's key: Mix(seed), then Mix(key ^ uint32(id)) for each source id in order.
uint64_t SampleKey(uint64_t seed, const TokenSpan& source);

// The uniform number of `step` in [0, 1): (Mix(key + step) >> 11) * 2^-53.
double SampleUniform(uint64_t key, size_t step);

// What one draw needs besides the logits; order and weight are the caller's [V] scratch.
struct SampleScratch {
  int32_t* order = nullptr;  // [V] candidate ids
  double* weight = nullptr;  // [V] weights, by id
};

// The id drawn from logits[0..V) for uniform number u by the rule of headwise.hpp ("Sampling",
// steps 1-4): top_k, top_p and temperature of `options`; `excluded` (an id, or -1 for none) is
// left out of the candidates (EOS below min_length). Ids whose logit is -inf or NaN are never
// candidates. Returns `fallback` when no candidate is left. Cost: one pass over the row; one
// exp per candidate without top_k (with it, a partial sort and top_k exps); with top_p but no
// top_k, a partial sort of only as much of the order as the nucleus needs.
int32_t DrawToken(const float* logits, size_t V, const SearchOptions& options, int32_t excluded,
                  double u, int32_t fallback, const SampleScratch& scratch);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_SAMPLER_H_
