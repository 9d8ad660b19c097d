#include "search_options.h"

#include <cmath>
#include <string>

namespace headwise {

Status ValidateSearchOptions(const SearchOptions& o, const TranslatorLimits& limits) {
  if (o.beam_size < 1 || o.beam_size > limits.max_beam) {
    return InvalidArgument("SearchOptions.beam_size " + std::to_string(o.beam_size) +
                           " must be in [1, max_beam = " + std::to_string(limits.max_beam) + "]");
  }
  if (o.num_hypotheses < 1 || o.num_hypotheses > o.beam_size) {
    return InvalidArgument("SearchOptions.num_hypotheses " + std::to_string(o.num_hypotheses) +
                           " must be in [1, beam_size = " + std::to_string(o.beam_size) + "]");
  }
  if (!std::isfinite(o.length_penalty)) {
    return InvalidArgument("SearchOptions.length_penalty must be finite");
  }
  const int stop = static_cast<int>(o.beam_stop);
  if (stop < static_cast<int>(BeamStop::kExhaustive) || stop > static_cast<int>(BeamStop::kOutscored)) {
    return InvalidArgument("SearchOptions.beam_stop " + std::to_string(stop) +
                           " must be 0 (exhaustive), 1 (top-eos) or 2 (outscored)");
  }
  if (o.max_length < 0 || o.max_length > limits.max_target_tokens) {
    return InvalidArgument("SearchOptions.max_length " + std::to_string(o.max_length) +
                           " must be in [0, max_target_tokens = " +
                           std::to_string(limits.max_target_tokens) + "] (0 = the limit)");
  }
  return Status::Ok();
}

}  // namespace headwise
