// Greedy search: argmax each step (lowest id on ties) until EOS or the maximum length, after
// the sentence's forced target-prefix steps; EOS is passed over below options.min_length, and
// with options.sample each free step draws its id instead (sampler.h). Each sentence owns cache
// slot s; finished sentences drop out of the rows of later steps.
#include <cmath>

#include "kernels/softmax.h"
#include "sampler.h"
#include "search.h"
#include "shortlist.h"

namespace headwise {
namespace {

// The lowest id reaching the largest logit other than `excluded`'s; `excluded` itself when
// every other logit is -inf or NaN.
size_t ArgmaxExcept(const float* x, size_t V, size_t excluded) {
  size_t best = excluded;
  for (size_t v = 0; v < V; ++v) {
    if (v == excluded || !(x[v] > -INFINITY)) continue;
    if (best == excluded || x[v] > x[best]) best = v;
  }
  return best;
}

}  // namespace

Status RunGreedy(const Decoder& decoder, const SearchBuffers& b, size_t batch,
                 const SearchOptions& options, size_t max_length) {
  const StepRows& rows_of = decoder.rows();
  const ShortlistOutput* shortlist = decoder.shortlist();
  const size_t V = b.vocab;
  const size_t T = b.max_length;
  const size_t eos = static_cast<size_t>(b.eos_id);
  const size_t min_length = static_cast<size_t>(options.min_length);
  const SampleScratch scratch{b.sample_order, b.sample_weight};
  for (size_t s = 0; s < batch; ++s) {
    b.slot_score[s] = 0.0f;
    b.done[s] = 0;
    b.hyps.Clear(s);
    if (options.sample) b.sample_key[s] = SampleKey(options.seed, b.sources[s]);
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
    const bool eos_allowed = step >= min_length;
    for (size_t r = 0; r < rows; ++r) {
      const size_t s = static_cast<size_t>(rows_of.sentence[r]);
      float* x = b.logits + r * V;
      float max = 0.0f;
      const float log_sum = MaskPadAndLogSumExp(b, x, &max, shortlist, s);
      size_t best = 0;
      if (step < PrefixLength(b, s)) {  // forced: the prefix's id (never EOS)
        best = static_cast<size_t>(b.prefixes[s].ids[step]);
      } else if (options.sample) {
        // Every id outside a shortlist's list for s is -inf, so never a candidate.
        best = static_cast<size_t>(DrawToken(x, V, options, eos_allowed ? -1 : b.eos_id,
                                             SampleUniform(b.sample_key[s], step), b.eos_id,
                                             scratch));
      } else {
        best = kernels::FirstIndexOf(x, V, max);  // lowest id reaching the maximum
        if (!eos_allowed && best == eos) best = ArgmaxExcept(x, V, eos);
        // With a shortlist the ids outside s's list are -inf: best is inside unless every
        // logit of the list is -inf or NaN (non-finite weights); EOS (always inside) then
        // ends it.
        if (shortlist != nullptr && !shortlist->Allows(s, best)) best = eos;
      }
      b.slot_score[s] += (x[best] - max) - log_sum;
      int32_t* ids = b.slot_ids + s * T;
      if (best == eos) {
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
