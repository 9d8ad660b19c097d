// Greedy search: argmax each step (lowest id on ties) until EOS or the maximum length, after
// the sentence's forced target-prefix steps. Each sentence owns cache slot s; finished
// sentences drop out of the rows of later steps.
#include "kernels/softmax.h"
#include "search.h"
#include "shortlist.h"

namespace headwise {

Status RunGreedy(const Decoder& decoder, const SearchBuffers& b, size_t batch,
                 const SearchOptions& options, size_t max_length) {
  const StepRows& rows_of = decoder.rows();
  const ShortlistOutput* shortlist = decoder.shortlist();
  const size_t V = b.vocab;
  const size_t T = b.max_length;
  for (size_t s = 0; s < batch; ++s) {
    b.slot_score[s] = 0.0f;
    b.done[s] = 0;
    b.hyps.Clear(s);
  }
  for (size_t step = 0; step < max_length; ++step) {
    size_t rows = 0;
    for (size_t s = 0; s < batch; ++s) {
      if (b.done[s]) continue;
      rows_of.token[rows] = step == 0 ? b.decoder_start_id : b.slot_ids[s * T + step - 1];
      rows_of.slot[rows] = static_cast<int32_t>(s);
      rows_of.sentence[rows] = static_cast<int32_t>(s);
      ++rows;
    }
    if (rows == 0) break;
    HW_RETURN_IF_ERROR(decoder.Step(rows, step, b.logits));
    const OpTimer timer(decoder.profile(), OpKind::kSearch);
    for (size_t r = 0; r < rows; ++r) {
      const size_t s = static_cast<size_t>(rows_of.sentence[r]);
      float* x = b.logits + r * V;
      float max = 0.0f;
      const float log_sum = MaskPadAndLogSumExp(b, x, &max, shortlist);
      size_t best = 0;
      if (step < PrefixLength(b, s)) {  // forced: the prefix's id (never EOS)
        best = static_cast<size_t>(b.prefixes[s].ids[step]);
      } else {
        best = kernels::FirstIndexOf(x, V, max);  // lowest id reaching the maximum
        // With a shortlist the ids outside its union are -inf: best is inside unless every
        // logit of the union is -inf or NaN (non-finite weights); EOS (always inside) then
        // ends it.
        if (shortlist != nullptr && !shortlist->Allows(best)) best = static_cast<size_t>(b.eos_id);
      }
      b.slot_score[s] += (x[best] - max) - log_sum;
      int32_t* ids = b.slot_ids + s * T;
      if (static_cast<int32_t>(best) == b.eos_id) {
        b.hyps.Store(s, ids, step,
                     NormalizedScore(b.slot_score[s], step + 1, options.length_penalty), true);
        b.done[s] = 1;
        continue;
      }
      ids[step] = static_cast<int32_t>(best);
      if (step + 1 == max_length) {
        b.hyps.Store(s, ids, step + 1,
                     NormalizedScore(b.slot_score[s], step + 1, options.length_penalty), false);
        b.done[s] = 1;
      }
    }
  }
  for (size_t s = 0; s < batch; ++s) b.hyps.Order(s);
  return Status::Ok();
}

}  // namespace headwise
