// runtime/src/lanes.h: batch lanes (TranslatorLimits::batch_lanes). A call of several sentences
// is dealt out to the lanes (sentence i to lane i % lanes) and each lane runs its sentences whole,
// encoder, every decode step and the search, on one thread of the Translator's pool, all lanes
// at once: one wake of the workers per call instead of one per product, and the parts that a
// per-product split leaves on the calling thread (search, attention, layer norms, int8
// quantization, small products) run in parallel too.
//
// Exactness: every sentence is computed on its own rows by kernels whose per-row result does not
// depend on the other rows of a product (int8: exact int32 sums; fp32 in place: one summation
// order for one row and several, kernels/f32_gemv.h), and with a vocabulary shortlist each row
// keeps its own sentence's list (Translator::Impl::shortlist prepares the call's union, each
// lane adopts it and records its sentences' lists), so results are the same bits with lanes as
// without, and as for each sentence alone.
//
// Ownership: each Lane owns an arena planned for ceil(max_batch / lanes) sentences (no sort
// window), its own operators (a Network without a pool, on the lane's int8 scratch) and a view of
// the Translator's shortlist union with scratch of its own. Operators that would hold a packed
// copy of the weights are never created for a lane: lanes need every operator of the
// Translator's Network to read the weights in place (ResolveBatchLanes). Lanes live as long as
// their Translator and point into its Model and its shortlist buffers.
#ifndef HEADWISE_RUNTIME_LANES_H_
#define HEADWISE_RUNTIME_LANES_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "arena.h"
#include "headwise/headwise.hpp"
#include "model_impl.h"
#include "network.h"
#include "shortlist.h"
#include "translator_plan.h"

namespace headwise {

struct Lane {
  Arena arena;
  TranslatorBuffers buf;
  Network net;                      // after buf: its int8 operators point at buf.int8
  ShortlistBuffers shortlist_view;  // the Translator's union, this lane's out / row scratch
  ShortlistOutput shortlist;        // valid() when the Translator's shortlist is
  TokenSpan* spans = nullptr;       // [max_sentences] the running call's sources
  TokenSpan* prefixes = nullptr;    // [max_sentences] and their target prefixes
  size_t max_sentences = 0;
  size_t sentences = 0;             // of the last call that ran on lanes
  Status status;                    // of the last call, written by the lane's thread
};

struct BatchLanes {
  std::vector<std::unique_ptr<Lane>> lanes;  // empty: off (batch_lanes 1)
  size_t bytes = 0;                          // the lanes' arenas together
};

// The lane count `limits` ask for, against the Translator's Network `net` (created, with its
// pool): limits.batch_lanes, or for 0 num_threads (at most max_batch) when num_threads > 1 and
// no operator holds a weight copy, else 1. Errors (kInvalidArgument, naming the field): a
// negative value; more lanes than num_threads or max_batch; more than one lane where an operator
// holds a packed copy of its weights.
Result<int> ResolveBatchLanes(const TranslatorLimits& limits, const Network& net);

// The bytes the lanes' arenas need (limits.batch_lanes resolved, > 1); `shortlist` is the
// Translator's shortlist buffers (null when the shortlist is off). SIZE_MAX when they overflow.
size_t MeasureLanes(const Model::Impl& model, const TranslatorLimits& limits,
                    size_t hyps_per_sentence, const ShortlistBuffers* shortlist);

// Creates limits.batch_lanes lanes (> 1). Errors: those of Arena::Allocate and CreateNetwork.
Status CreateLanes(const Model::Impl& model, const TranslatorLimits& limits,
                   size_t hyps_per_sentence, const ShortlistBuffers* shortlist,
                   BatchLanes* out);

// Runs `batch` validated sources (2 <= batch, lanes <= batch is not required: min(lanes, batch)
// lanes run) with their validated target prefixes (null: none) on the lanes over `main`'s
// pool; `main_shortlist` has prepared the union of all `batch` sources and prefixes when
// valid(). The results of sentence s are in lane s % n, index s / n, n the returned lane count.
// The first failing lane's status otherwise. No allocation.
Result<size_t> RunLanes(BatchLanes& lanes, const Network& main,
                        const ShortlistOutput& main_shortlist, const TokenSpan* sources,
                        const TokenSpan* prefixes, size_t batch, const SearchOptions& options,
                        size_t max_length);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_LANES_H_
