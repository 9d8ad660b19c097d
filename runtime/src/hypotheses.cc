#include "hypotheses.h"

#include <cstring>

namespace headwise {

void HypothesisStore::Store(size_t s, const int32_t* hyp_ids, size_t num_ids, float score,
                            bool finished) const {
  const size_t H = per_sentence;
  const size_t k = static_cast<size_t>(stored[s]++);
  HypothesisRecord& rec = records[s * H + k];
  rec.length = static_cast<int32_t>(num_ids);
  rec.score = score;
  rec.finished = finished;
  if (num_ids > 0) std::memcpy(ids + (s * H + k) * max_ids, hyp_ids, num_ids * sizeof(int32_t));
}

void HypothesisStore::Order(size_t s) const {
  const size_t H = per_sentence;
  const size_t n = static_cast<size_t>(stored[s]);
  int32_t* o = order + s * H;
  const HypothesisRecord* rec = records + s * H;
  // Insertion sort: at most 3 * beam records, and std::stable_sort may allocate a buffer.
  for (size_t i = 0; i < n; ++i) {
    size_t j = i;
    while (j > 0 && rec[o[j - 1]].score < rec[i].score) {
      o[j] = o[j - 1];
      --j;
    }
    o[j] = static_cast<int32_t>(i);
  }
}

float HypothesisStore::NthBestScore(size_t s, size_t n) const {
  Order(s);
  return records[s * per_sentence + static_cast<size_t>(order[s * per_sentence + n - 1])].score;
}

HypothesisView HypothesisStore::Get(size_t s, size_t k) const {
  const size_t record = s * per_sentence + static_cast<size_t>(order[s * per_sentence + k]);
  const HypothesisRecord& rec = records[record];
  HypothesisView view;
  view.ids = ids + record * max_ids;
  view.size = static_cast<size_t>(rec.length);
  view.score = rec.score;
  view.finished = rec.finished;
  return view;
}

}  // namespace headwise
