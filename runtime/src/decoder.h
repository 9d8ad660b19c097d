// runtime/src/decoder.h: one incremental decoder step for a set of rows.
#ifndef HEADWISE_RUNTIME_DECODER_H_
#define HEADWISE_RUNTIME_DECODER_H_

#include <cstddef>

#include "translator_impl.h"

namespace headwise {

// Runs the decoder for `rows` rows at position `step` (all rows of a call advance together).
// Row r feeds buf.row_token[r], appends its self-attention K/V at position `step` of cache
// slot buf.row_slot[r] and attends to positions [0, step] of that slot, and cross-attends to the
// source rows of sentence buf.row_sentence[r] (RunEncoder must have run). Writes the
// unmasked logits of row r to logits + r * vocab_size. No allocation.
Status DecoderStep(Translator::Impl& t, size_t rows, size_t step, float* logits);

// Copies positions [0, length) of cache slot `from` to slot `to` in every decoder layer (a
// beam that continues from a parent another beam already continues). from != to.
void CopyCacheSlot(Translator::Impl& t, size_t from, size_t to, size_t length);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_DECODER_H_
