#include <cmath>
#include <limits>

#include "kernels/softmax.h"
#include "search.h"
#include "shortlist.h"

namespace headwise {

float MaskPadAndLogSumExp(const SearchBuffers& buf, float* logits, float* max_out,
                          const ShortlistOutput* shortlist, size_t sentence) {
  logits[buf.pad_id] = -std::numeric_limits<float>::infinity();
  if (shortlist != nullptr) return shortlist->LogSumExp(logits, sentence, max_out);
  const kernels::LogSoftmaxNorm norm = kernels::LogSoftmaxNormalizer(logits, buf.vocab);
  *max_out = norm.max;
  return norm.log_sum;
}

float NormalizedScore(float sum_logprobs, size_t length, float length_penalty) {
  // float32 power, as the reference computes it (np.power on float32 scalars).
  return sum_logprobs / std::pow(static_cast<float>(length), length_penalty);
}

}  // namespace headwise
