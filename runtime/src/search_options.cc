#include "search_options.h"

#include <cmath>
#include <string>

namespace headwise {
namespace {

Status CheckSampling(const SearchOptions& o) {
  if (!o.sample) {
    const char* set = o.top_k != 0            ? "top_k"
                      : o.top_p != 1.0f       ? "top_p"
                      : o.temperature != 1.0f ? "temperature"
                      : o.seed != 0           ? "seed"
                                              : nullptr;
    if (set != nullptr) {
      return InvalidArgument(std::string("SearchOptions.") + set +
                             " applies only to sampling: set sample = true, or leave it at its "
                             "default");
    }
    return Status::Ok();
  }
  if (o.beam_size != 1) {
    return InvalidArgument("SearchOptions.sample needs beam_size 1, found beam_size " +
                           std::to_string(o.beam_size));
  }
  if (o.top_k < 0) {
    return InvalidArgument("SearchOptions.top_k " + std::to_string(o.top_k) +
                           " must be >= 0 (0 = every id)");
  }
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) {
    return InvalidArgument("SearchOptions.top_p " + std::to_string(o.top_p) +
                           " must be in (0, 1] (1 = off)");
  }
  if (!(o.temperature > 0.0f) || !std::isfinite(o.temperature)) {
    return InvalidArgument("SearchOptions.temperature " + std::to_string(o.temperature) +
                           " must be finite and > 0");
  }
  return Status::Ok();
}

}  // namespace

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
  const size_t max_length = MaxLength(o, limits);
  if (o.min_length < 0 || static_cast<size_t>(o.min_length) >= max_length) {
    return InvalidArgument("SearchOptions.min_length " + std::to_string(o.min_length) +
                           " must be in [0, max_length = " + std::to_string(max_length) +
                           ") (0 = off)");
  }
  return CheckSampling(o);
}

}  // namespace headwise
