// runtime/src/batching.h: how a call over many lines is cut into batches (the plan: sort by
// source length within the window, cut by lines and tokens), and the window's results in the
// arena, which Translator::TranslateIdsEach (batching.cc) fills in input order.
//
// Ownership: every pointer of WindowBuffers points into the Translator's arena
// (LayoutWindowBuffers carves them from the same ArenaCarver as the other buffers). No
// allocation anywhere in this file's functions.
#ifndef HEADWISE_RUNTIME_BATCHING_H_
#define HEADWISE_RUNTIME_BATCHING_H_

#include <cstddef>
#include <cstdint>

#include "arena.h"
#include "format/model_config.h"
#include "headwise/headwise.hpp"

namespace headwise {

// One stored hypothesis of a window line.
struct WindowHypothesis {
  int32_t length = 0;  // ids stored (EOS excluded)
  float score = 0.0f;
  bool finished = false;
};

// Why a window line failed, recorded without allocating; its message is built only when the
// caller asks (Translator::line_status).
struct LineFault {
  enum Kind : int32_t {
    kNone = 0, kEmpty, kNullIds, kTooLong, kBadId,  // the source
    kPrefixNullIds, kPrefixTooLong, kPrefixBadId,   // the target prefix
    kBatch
  };
  Kind kind = kNone;
  bool described = false;  // the line's Status holds the message
  size_t size = 0;         // kTooLong, kPrefixTooLong: the tokens
  size_t limit = 0;        // kPrefixTooLong: the maximum length
  size_t position = 0;     // kBadId, kPrefixBadId: where
  int32_t id = 0;          // kBadId, kPrefixBadId: the id
};

// The results of the last TranslateIdsEach, W = sort_window lines of up to K = max_beam
// hypotheses of up to T = max_target_tokens ids, plus the plan's own arrays.
struct WindowBuffers {
  size_t max_lines = 0;        // W
  size_t per_line = 0;         // K
  size_t max_ids = 0;          // T
  size_t* order = nullptr;     // [W] line indices in batch order
  size_t* length = nullptr;    // [W] source length per line (0 = the line failed its checks)
  TokenSpan* spans = nullptr;  // [max_batch] the running batch's sources
  TokenSpan* prefixes = nullptr;  // [max_batch] and their target prefixes
  LineFault* fault = nullptr;  // [W]
  int32_t* count = nullptr;    // [W] hypotheses stored per line
  WindowHypothesis* hyps = nullptr;  // [W, K]
  int32_t* ids = nullptr;      // [W, K, T]

  HypothesisView Get(size_t line, size_t k) const {
    const WindowHypothesis& h = hyps[line * per_line + k];
    return HypothesisView{ids + (line * per_line + k) * max_ids, static_cast<size_t>(h.length),
                          h.score, h.finished};
  }
};

// Carves `buf` for `limits` (sort_window already resolved, >= 1) from `carver`.
void LayoutWindowBuffers(const TranslatorLimits& limits, ArenaCarver& carver, WindowBuffers* buf);

// The sort window that `limits` ask for: sort_window, or 16 x max_batch when it is 0.
// Errors: kInvalidArgument for a negative value; kInvalidArgument when 16 x max_batch overflows.
Result<int> ResolveSortWindow(const TranslatorLimits& limits);

// What is wrong with `src` (kNone: nothing). No allocation.
LineFault FindFault(const TokenSpan& src, const TranslatorLimits& limits, int32_t vocab_size);
// What is wrong with target prefix `prefix` for a search of at most `max_length` generated
// tokens (kNone: nothing; an empty prefix never is): null ids, more than max_length ids, or an
// id outside the vocabulary, PAD or EOS (headwise.hpp, "Target prefix"). No allocation.
LineFault FindPrefixFault(const TokenSpan& prefix, size_t max_length, const ModelConfig& config);
// The message of a fault other than kNone / kBatch, e.g. "30 tokens exceed
// TranslatorLimits.max_source_tokens 24"; it does not name the line, and it is the ErrorCode
// FaultCode says.
Status DescribeFault(const LineFault& fault, const TranslatorLimits& limits,
                     const ModelConfig& config);
ErrorCode FaultCode(const LineFault& fault);

// Orders order[0, n) (line indices) by length[line] ascending, equal lengths by line index, so
// the plan never depends on the sort algorithm.
void SortByLength(const size_t* length, size_t* order, size_t n);

// How many lines, starting at order[start] (start < n), form the next batch: at least 1, at
// most max_lines, and while more than one, lines x longest source <= max_tokens (0 = no budget).
size_t NextBatchSize(const size_t* length, const size_t* order, size_t start, size_t n,
                     size_t max_lines, size_t max_tokens);

// BatchOptions against the limits: max_lines in [0, max_batch], max_tokens >= 0. Errors:
// kInvalidArgument naming the field.
Status ValidateBatchOptions(const BatchOptions& batching, const TranslatorLimits& limits);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_BATCHING_H_
