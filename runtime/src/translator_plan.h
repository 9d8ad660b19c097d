// runtime/src/translator_plan.h: the activation arena plan of a Translator, derived from the
// model's dimensions (with each block's own kept-head width) and the declared limits.
#ifndef HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_
#define HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_

#include <cstddef>

#include "arena.h"
#include "translator_impl.h"

namespace headwise {

// Takes every buffer of `buf` from `carver` (see arena.h: run once to measure, once to carve).
// `hyps_per_sentence` is H of translator_impl.h.
void LayoutBuffers(const Model::Impl& model, const TranslatorLimits& limits,
                   size_t hyps_per_sentence, ArenaCarver& carver, Buffers* buf);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TRANSLATOR_PLAN_H_
