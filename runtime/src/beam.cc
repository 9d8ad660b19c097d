// Beam search, exactly as include/headwise/headwise.hpp states it (after a sentence's forced
// target-prefix steps, which keep its one live beam):
//   - rank every (live beam b, token v) by score_b + logp(b, v), ties by lower b * V + v (EOS
//     left out below options.min_length);
//   - walk the best 2 * beam_size: EOS finishes a hypothesis, anything else continues a beam,
//     until beam_size beams continue;
//   - a sentence ends when beam_size hypotheses have finished or options.beam_stop's rule says
//     so (its live beams are dropped), or at the maximum length (its live beams become
//     unfinished hypotheses).
// Bound on stored records: before a step fewer than beam_size finished, a step finishes at most
// one per live beam, and at the end at most beam_size live beams are added: < 3 * beam_size.
//
// Cache slots: sentence s owns slots [s * K, s * K + K) (K = max_beam). A continuing beam takes
// over its parent's slot when it is the parent's first child; further children of the same
// parent take a slot no continuing beam claimed and share the parent's history there
// (Decoder::ShareCacheSlot: T indices, no cache values are copied).
#include <limits>

#include "kernels/softmax.h"
#include "search.h"
#include "shortlist.h"

namespace headwise {
namespace {

// Keeps the best `capacity` (value, index) pairs, best first; an equal value never displaces
// an earlier (lower) index because indices arrive in increasing order.
struct TopCandidates {
  float* value;
  int32_t* index;
  size_t capacity;
  size_t size = 0;

  void Offer(float v, int32_t i) {
    if (size == capacity && !(v > value[size - 1])) return;
    size_t j = size < capacity ? size++ : size - 1;
    while (j > 0 && value[j - 1] < v) {
      value[j] = value[j - 1];
      index[j] = index[j - 1];
      --j;
    }
    value[j] = v;
    index[j] = i;
  }
};

// Offers one row's candidates to `top`: id id_of(k) with logit values[k] for k < n, ids rising
// with k, PAD and `excluded` never. Every candidate enters until the list is full, then only
// those above its last entry (which only rises), found with FirstScoreAbove: the same list,
// unchanged by the ones skipped, as Offer rejects them.
template <typename IdOf>
void OfferRow(TopCandidates& top, const float* values, size_t n, IdOf id_of, float score,
              float max, float log_sum, int32_t base, int32_t pad, int32_t excluded) {
  size_t k = 0;
  for (; k < n && top.size < top.capacity; ++k) {
    const int32_t v = id_of(k);
    if (v == pad || v == excluded) continue;
    top.Offer(score + ((values[k] - max) - log_sum), base + v);
  }
  while (k < n) {
    k = kernels::FirstScoreAbove(values, k, n, score, max, log_sum, top.value[top.size - 1]);
    if (k == n) break;
    const int32_t v = id_of(k);
    if (v != pad && v != excluded) top.Offer(score + ((values[k] - max) - log_sum), base + v);
    ++k;
  }
}

// Ranks the candidates of sentence s from its `live` rows of logits starting at `x`; with a
// shortlist only the tokens of s's list (the others are -inf), still in increasing order.
// `excluded` (EOS below the minimum length, else -1) is never a candidate, like PAD.
size_t SelectCandidates(const SearchBuffers& b, const ShortlistOutput* shortlist, size_t s,
                        size_t live, float* x, size_t beam, int32_t excluded) {
  const size_t V = b.vocab;
  const size_t K = b.max_beam;
  TopCandidates top{b.cand_value, b.cand_index, 2 * beam};
  for (size_t j = 0; j < live; ++j) {
    float* row = x + j * V;
    float max = 0.0f;
    const float log_sum = MaskPadAndLogSumExp(b, row, &max, shortlist, s);
    const float score = b.slot_score[b.live_slot[s * K + j]];
    const int32_t base = static_cast<int32_t>(j * V);
    if (shortlist != nullptr) {
      // s's list, on the logits LogSumExp gathered in its order (k-th entry = row[LineId(s, k)],
      // PAD's already -inf).
      OfferRow(top, shortlist->GatheredLogits(), shortlist->LineSize(s),
               [&](size_t k) { return shortlist->LineId(s, k); }, score, max, log_sum, base,
               b.pad_id, excluded);
    } else {
      OfferRow(top, row, V, [](size_t k) { return static_cast<int32_t>(k); }, score, max,
               log_sum, base, b.pad_id, excluded);
    }
  }
  return top.size;
}

// A forced step of sentence s (its one live beam's logits at `x`): the prefix's id at `step`
// continues the beam (buf.next_*, one entry) with its log-probability added.
void ForcePrefixId(const SearchBuffers& b, const ShortlistOutput* shortlist, size_t s,
                   size_t step, float* x) {
  float max = 0.0f;
  const float log_sum = MaskPadAndLogSumExp(b, x, &max, shortlist, s);
  const int32_t id = b.prefixes[s].ids[step];
  b.next_parent[0] = 0;
  b.next_token[0] = id;
  b.next_score[0] = b.slot_score[b.live_slot[s * b.max_beam]] + ((x[id] - max) - log_sum);
}

// Moves the `count` continuing beams (buf.next_*) of sentence s into cache slots and appends
// their tokens at position `step`.
void AdvanceBeams(const Decoder& decoder, const SearchBuffers& b, size_t s, size_t live,
                  size_t count, size_t step) {
  const size_t K = b.max_beam;
  const size_t T = b.max_length;
  int32_t* live_slot = b.live_slot + s * K;
  for (size_t p = 0; p < live; ++p) b.slot_claimed[p] = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t p = static_cast<size_t>(b.next_parent[i]);
    b.next_slot[i] = b.slot_claimed[p] ? -1 : live_slot[p];
    b.slot_claimed[p] = 1;
  }
  int32_t free_slot = static_cast<int32_t>(s * K);
  for (size_t i = 0; i < count; ++i) {
    if (b.next_slot[i] >= 0) continue;
    for (;; ++free_slot) {  // the next slot of s no continuing beam took over
      bool taken = false;
      for (size_t p = 0; p < live; ++p) taken |= b.slot_claimed[p] && live_slot[p] == free_slot;
      if (!taken) break;
    }
    const int32_t from = live_slot[b.next_parent[i]];
    decoder.ShareCacheSlot(static_cast<size_t>(from), static_cast<size_t>(free_slot), step + 1);
    for (size_t k = 0; k < step; ++k) {
      b.slot_ids[static_cast<size_t>(free_slot) * T + k] = b.slot_ids[static_cast<size_t>(from) * T + k];
    }
    b.next_slot[i] = free_slot++;
  }
  for (size_t i = 0; i < count; ++i) {
    const size_t slot = static_cast<size_t>(b.next_slot[i]);
    b.slot_ids[slot * T + step] = b.next_token[i];
    b.slot_score[slot] = b.next_score[i];
    live_slot[i] = b.next_slot[i];
  }
  b.live_count[s] = static_cast<int32_t>(count);
}

// options.beam_stop's rule after sentence s's walk at `step`: `top_eos` says whether the walk's
// first candidate was EOS, `best_live` is the first continuing beam's sum of log-probabilities.
bool StopsEarly(const SearchOptions& options, const HypothesisStore& hyps, size_t s, size_t step,
                bool top_eos, float best_live) {
  const size_t n = static_cast<size_t>(options.num_hypotheses);
  if (hyps.count(s) < n) return false;
  switch (options.beam_stop) {
    case BeamStop::kExhaustive: return false;
    case BeamStop::kTopEos: return top_eos;
    case BeamStop::kOutscored:
      return hyps.NthBestScore(s, n) >= NormalizedScore(best_live, step + 1, options.length_penalty);
  }
  return false;
}

}  // namespace

Status RunBeam(const Decoder& decoder, const SearchBuffers& b, size_t batch,
               const SearchOptions& options, size_t max_length) {
  const StepRows& rows_of = decoder.rows();
  const size_t V = b.vocab;
  const size_t K = b.max_beam;
  const size_t T = b.max_length;
  const size_t beam = static_cast<size_t>(options.beam_size);
  for (size_t s = 0; s < batch; ++s) {
    b.live_count[s] = 1;
    b.live_slot[s * K] = static_cast<int32_t>(s * K);
    b.slot_score[s * K] = 0.0f;
    b.done[s] = 0;
    b.hyps.Clear(s);
  }
  for (size_t step = 0; step < max_length; ++step) {
    size_t rows = 0;
    for (size_t s = 0; s < batch; ++s) {
      if (b.done[s]) continue;
      for (int32_t j = 0; j < b.live_count[s]; ++j) {
        const int32_t slot = b.live_slot[s * K + static_cast<size_t>(j)];
        rows_of.token[rows] = step == 0 ? b.decoder_start_id
                                        : b.slot_ids[static_cast<size_t>(slot) * T + step - 1];
        rows_of.slot[rows] = slot;
        rows_of.sentence[rows] = static_cast<int32_t>(s);
        ++rows;
      }
    }
    if (rows == 0) break;
    HW_RETURN_IF_ERROR(decoder.Step(rows, step, b.logits));

    size_t row = 0;
    for (size_t s = 0; s < batch; ++s) {
      if (b.done[s]) continue;
      const size_t live = static_cast<size_t>(b.live_count[s]);
      float* x = b.logits + row * V;
      row += live;
      size_t count = 0;
      if (step < PrefixLength(b, s)) {  // forced: one live beam, its next id is the prefix's
        const OpTimer timer(decoder.profile(), OpKind::kSearch);
        ForcePrefixId(b, decoder.shortlist(), s, step, x);
        count = 1;
      } else {
        size_t num_cand = 0;
        {
          const OpTimer timer(decoder.profile(), OpKind::kSearch);
          const int32_t excluded = step < static_cast<size_t>(options.min_length) ? b.eos_id : -1;
          num_cand = SelectCandidates(b, decoder.shortlist(), s, live, x, beam, excluded);
        }
        bool top_eos = false;
        for (size_t c = 0; c < num_cand && count < beam; ++c) {
          const size_t parent = static_cast<size_t>(b.cand_index[c]) / V;
          const int32_t token = static_cast<int32_t>(static_cast<size_t>(b.cand_index[c]) % V);
          if (token == b.eos_id) {
            top_eos = top_eos || c == 0;
            const size_t slot = static_cast<size_t>(b.live_slot[s * K + parent]);
            b.hyps.Store(s, b.slot_ids + slot * T, step,
                         NormalizedScore(b.cand_value[c], step + 1, options.length_penalty), true);
            continue;
          }
          b.next_parent[count] = static_cast<int32_t>(parent);
          b.next_token[count] = token;
          b.next_score[count] = b.cand_value[c];
          ++count;
        }
        if (b.hyps.count(s) >= beam || count == 0 ||
            StopsEarly(options, b.hyps, s, step, top_eos, b.next_score[0])) {
          b.done[s] = 1;
          continue;
        }
      }
      AdvanceBeams(decoder, b, s, live, count, step);
      if (step + 1 == max_length) {
        for (size_t j = 0; j < count; ++j) {
          const size_t slot = static_cast<size_t>(b.live_slot[s * K + j]);
          b.hyps.Store(s, b.slot_ids + slot * T, step + 1,
                       NormalizedScore(b.slot_score[slot], step + 1, options.length_penalty),
                       false);
        }
        b.done[s] = 1;
      }
    }
  }
  for (size_t s = 0; s < batch; ++s) b.hyps.Order(s);
  return Status::Ok();
}

}  // namespace headwise
