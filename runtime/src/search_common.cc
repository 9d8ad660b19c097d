#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/softmax.h"
#include "search.h"

namespace headwise {

float MaskPadAndLogSumExp(const Translator::Impl& t, float* logits, float* max_out) {
  const size_t V = static_cast<size_t>(t.m->dims.vocab_size);
  logits[t.m->dims.pad_id] = -std::numeric_limits<float>::infinity();
  const kernels::LogSoftmaxNorm norm = kernels::LogSoftmaxNormalizer(logits, V);
  *max_out = norm.max;
  return norm.log_sum;
}

float NormalizedScore(float sum_logprobs, size_t length, float length_penalty) {
  // float32 power, as the reference computes it (np.power on float32 scalars).
  return sum_logprobs / std::pow(static_cast<float>(length), length_penalty);
}

void StoreHypothesis(Translator::Impl& t, size_t s, const int32_t* ids, size_t num_ids,
                     float score, bool finished) {
  Buffers& b = t.buf;
  const size_t H = t.hyps_per_sentence;
  const size_t T = static_cast<size_t>(t.limits.max_target_tokens);
  const size_t k = static_cast<size_t>(b.hyp_stored[s]++);
  HypothesisRecord& rec = b.hyp[s * H + k];
  rec.length = static_cast<int32_t>(num_ids);
  rec.score = score;
  rec.finished = finished;
  if (num_ids > 0) std::memcpy(b.hyp_ids + (s * H + k) * T, ids, num_ids * sizeof(int32_t));
}

void OrderHypotheses(Translator::Impl& t, size_t s) {
  Buffers& b = t.buf;
  const size_t H = t.hyps_per_sentence;
  const size_t n = static_cast<size_t>(b.hyp_stored[s]);
  int32_t* order = b.hyp_order + s * H;
  const HypothesisRecord* rec = b.hyp + s * H;
  // Insertion sort: at most 3 * beam records, and std::stable_sort may allocate a buffer.
  for (size_t i = 0; i < n; ++i) {
    size_t j = i;
    while (j > 0 && rec[order[j - 1]].score < rec[i].score) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = static_cast<int32_t>(i);
  }
}

}  // namespace headwise
