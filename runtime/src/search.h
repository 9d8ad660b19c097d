// runtime/src/search.h: greedy and beam search over DecoderStep, with the semantics fixed in
// include/headwise/headwise.hpp (the PyTorch reference in trainer/ follows the same rules).
// Both run after RunEncoder, write the results into the arena (buf.hyp*), and allocate nothing.
#ifndef HEADWISE_RUNTIME_SEARCH_H_
#define HEADWISE_RUNTIME_SEARCH_H_

#include <cstddef>
#include <cstdint>

#include "headwise/headwise.hpp"
#include "translator_impl.h"

namespace headwise {

// `max_length` is the resolved limit (options.max_length or max_target_tokens).
Status RunGreedy(Translator::Impl& t, size_t batch, const SearchOptions& options,
                 size_t max_length);
Status RunBeam(Translator::Impl& t, size_t batch, const SearchOptions& options,
               size_t max_length);

// Helpers shared by greedy.cc and beam.cc (search_common.cc).

// Sets the PAD logit to -inf (PAD is never produced); returns log(sum exp(x - max)) over the
// row and writes max, so that log_softmax(x)_v = (x_v - max) - returned value.
float MaskPadAndLogSumExp(const Translator::Impl& t, float* logits, float* max_out);

// sum_logprobs / length^length_penalty, all in float32 as the reference computes it.
float NormalizedScore(float sum_logprobs, size_t length, float length_penalty);

// Appends a hypothesis record for sentence s: `num_ids` ids (EOS excluded) and its normalised
// score. The caller guarantees fewer than H records exist.
void StoreHypothesis(Translator::Impl& t, size_t s, const int32_t* ids, size_t num_ids,
                     float score, bool finished);

// Orders sentence s's records by score, best first; ties keep insertion order.
void OrderHypotheses(Translator::Impl& t, size_t s);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_SEARCH_H_
