// runtime/src/translator_plan.h: the activation arena plan of a Translator, derived from the
// model's dimensions (with each block's own kept-head width) and the declared limits, carved
// into each stage's buffers.
#ifndef HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_
#define HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_

#include <cstddef>

#include "arena.h"
#include "batching.h"
#include "decoder.h"
#include "encoder.h"
#include "fc/fully_connected.h"
#include "headwise/headwise.hpp"
#include "model_impl.h"
#include "search.h"
#include "shortlist.h"

namespace headwise {

// Every buffer of a Translator, grouped by the stage that uses it. The arrays that pass from
// one stage to the next (activations.h) appear in both stages' structs with the same pointers.
struct TranslatorBuffers {
  float* positions = nullptr;  // [max(S, T), d], filled once at Create
  EncoderBuffers encoder;
  DecoderBuffers decoder;
  SearchBuffers search;
  // Quantized input rows of the int8 operators ([max(N, R), widest input]); empty unless the
  // model has I8 weights.
  Int8Scratch int8;
  // F16 copies of one operator's input and output rows; empty unless the f16 path is on.
  F16Scratch f16;
  // The sort window's plan and results (TranslateIdsEach, batching.h).
  WindowBuffers window;
  // The vocabulary shortlist's union and gathered output rows (shortlist.h); empty unless
  // ShortlistEnabled.
  ShortlistBuffers shortlist;
};

// Takes every buffer of `buf` from `carver` (see arena.h: run once to measure, once to carve).
// limits.sort_window must be resolved (ResolveSortWindow).
// `hyps_per_sentence` is H of hypotheses.h. `f16_compute`: F16 matrices run the f16 path
// (fc/fully_connected.h), which needs buf->f16.
// `with_window`: also the sort window's plan and results (a batch lane, lanes.h, has none).
void LayoutBuffers(const Model::Impl& model, const TranslatorLimits& limits,
                   size_t hyps_per_sentence, bool f16_compute, ArenaCarver& carver,
                   TranslatorBuffers* buf, bool with_window = true);

// Whether any weight matrix of the model is stored F16 (embeddings excluded: they are read by
// our own gather, never by an operator).
bool HasF16Matrices(const Model::Impl& model);
// Whether any weight matrix the operators read is stored I8.
bool HasInt8Weights(const Model::Impl& model);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_
