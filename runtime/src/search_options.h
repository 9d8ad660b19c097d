// runtime/src/search_options.h: the one check of a SearchOptions against a Translator's
// limits, for the token-id path (translate_ids.cc) and the text path (translate_text.cc, which
// checks before tokenizing so that the answer never depends on the text).
#ifndef HEADWISE_RUNTIME_SEARCH_OPTIONS_H_
#define HEADWISE_RUNTIME_SEARCH_OPTIONS_H_

#include <cstddef>

#include "headwise/headwise.hpp"

namespace headwise {

// beam_size in [1, max_beam], num_hypotheses in [1, beam_size], length_penalty finite,
// max_length in [0, max_target_tokens], min_length in [0, resolved max_length); with sample:
// beam_size 1, top_k >= 0, top_p in (0, 1], temperature finite and > 0; without it top_k,
// top_p, temperature and seed at their defaults. Errors: kInvalidArgument naming the field, its
// value and the allowed range.
Status ValidateSearchOptions(const SearchOptions& options, const TranslatorLimits& limits);

// The most tokens a search generates (EOS included): options.max_length, else
// limits.max_target_tokens.
inline size_t MaxLength(const SearchOptions& options, const TranslatorLimits& limits) {
  return static_cast<size_t>(options.max_length > 0 ? options.max_length
                                                    : limits.max_target_tokens);
}

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_SEARCH_OPTIONS_H_
