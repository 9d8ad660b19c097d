// runtime/src/search.h: greedy and beam search over a Decoder, with the semantics fixed in
// include/headwise/headwise.hpp (the PyTorch reference in trainer/ follows the same rules).
// Both run after RunEncoder, write the results into the arena (buf.hyps), and allocate nothing.
#ifndef HEADWISE_RUNTIME_SEARCH_H_
#define HEADWISE_RUNTIME_SEARCH_H_

#include <cstddef>
#include <cstdint>

#include "decoder.h"
#include "headwise/headwise.hpp"
#include "hypotheses.h"

namespace headwise {

// The search's view of the arena (activations.h for the shapes) and the model constants it
// needs. The decoder reads `rows`' arrays (Decoder::rows()); the search writes them.
struct SearchBuffers {
  size_t vocab = 0;       // V
  size_t max_beam = 0;    // K: cache slots per sentence
  size_t max_length = 0;  // T
  int32_t pad_id = 0, eos_id = 0, decoder_start_id = 0;

  float* logits = nullptr;  // [R, V]
  // Per cache slot: the ids generated so far and the running sum of log-probabilities.
  int32_t* slot_ids = nullptr;  // [R, T]
  float* slot_score = nullptr;  // [R]
  uint8_t* done = nullptr;      // [B]

  // Beam bookkeeping.
  int32_t* live_slot = nullptr;     // [B, K] slots of each sentence's live beams, in beam order
  int32_t* live_count = nullptr;    // [B]
  float* cand_value = nullptr;      // [2K] best candidates of one sentence
  int32_t* cand_index = nullptr;    // [2K] beam * V + token
  int32_t* next_parent = nullptr;   // [K]
  int32_t* next_token = nullptr;    // [K]
  float* next_score = nullptr;      // [K]
  int32_t* next_slot = nullptr;     // [K]
  uint8_t* slot_claimed = nullptr;  // [K]

  // Sampling (sampler.h): each sentence's key, and one draw's scratch.
  uint64_t* sample_key = nullptr;     // [B]
  int32_t* sample_order = nullptr;    // [V]
  double* sample_weight = nullptr;    // [V]

  HypothesisStore hyps;  // the results

  // The running call's sources, one per sentence (sampling keys them), set by the caller
  // before each run like `prefixes`.
  const TokenSpan* sources = nullptr;

  // The running call's target prefixes, one per sentence (size 0: none), or null for none;
  // set by the caller before each run (the spans are the caller's, valid during the run).
  const TokenSpan* prefixes = nullptr;
};

// How many of sentence s's first steps are forced (its target prefix's length).
inline size_t PrefixLength(const SearchBuffers& buf, size_t s) {
  return buf.prefixes != nullptr ? buf.prefixes[s].size : 0;
}

// `max_length` is the resolved limit (options.max_length or max_target_tokens); `options` were
// validated (ValidateSearchOptions), and so were the prefixes (each at most max_length ids of
// the vocabulary, none PAD or EOS). A forced step (headwise.hpp, "Target prefix") appends the
// prefix's id to the sentence's one live beam whatever the logits say. Below
// options.min_length EOS is never chosen ("Minimum length"); RunGreedy draws the free steps'
// ids when options.sample ("Sampling"; buf.sources must then be set).
Status RunGreedy(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
                 const SearchOptions& options, size_t max_length);
Status RunBeam(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
               const SearchOptions& options, size_t max_length);

// Helpers shared by greedy.cc and beam.cc (search_common.cc).

// Sets the PAD logit to -inf (PAD is never produced); returns log(sum exp(x - max)) over the
// row and writes max, so that log_softmax(x)_v = (x_v - max) - returned value. With a
// shortlist (non-null) only the logits of `sentence`'s list are summed (every other one is
// -inf and adds 0): ShortlistOutput::LogSumExp, the same value and, when the list holds every
// id, the same bits.
float MaskPadAndLogSumExp(const SearchBuffers& buf, float* logits, float* max_out,
                          const ShortlistOutput* shortlist = nullptr, size_t sentence = 0);

// sum_logprobs / length^length_penalty, all in float32 as the reference computes it.
float NormalizedScore(float sum_logprobs, size_t length, float length_penalty);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_SEARCH_H_
