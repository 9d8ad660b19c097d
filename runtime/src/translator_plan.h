// runtime/src/translator_plan.h: the activation arena plan of a Translator, derived from the
// model's dimensions (with each block's own kept-head width) and the declared limits.
#ifndef HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_
#define HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_

#include <cstddef>

#include "arena.h"
#include "translator_impl.h"

namespace headwise {

// Takes every buffer of `buf` from `carver` (see arena.h: run once to measure, once to carve).
// `hyps_per_sentence` is H of translator_impl.h. `f16_compute`: F16 matrices run the f16 path
// (fc/fully_connected.h), which needs buf->f16.
void LayoutBuffers(const Model::Impl& model, const TranslatorLimits& limits,
                   size_t hyps_per_sentence, bool f16_compute, ArenaCarver& carver, Buffers* buf);

// Whether any weight matrix of the model is stored F16 (embeddings excluded: they are read by
// our own gather, never by an operator).
bool HasF16Matrices(const Model::Impl& model);
// Whether any weight matrix the operators read is stored I8.
bool HasInt8Weights(const Model::Impl& model);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_
