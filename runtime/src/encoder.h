// runtime/src/encoder.h: the encoder pass of one call and the cross-attention keys/values it
// feeds to the decoder.
#ifndef HEADWISE_RUNTIME_ENCODER_H_
#define HEADWISE_RUNTIME_ENCODER_H_

#include <cstddef>

#include "headwise/headwise.hpp"
#include "translator_impl.h"

namespace headwise {

// Packs the `batch` sentences row after row (no padding: attention is run per sentence over its
// own rows, which is what the key padding mask computes), runs every encoder layer, then
// computes each decoder layer's cross-attention keys and values into buf.cross_k/v (head-major)
// once; every beam of a sentence reads the same rows. Sets buf.src_offset / buf.src_len. The sources must
// have been validated (ids in the vocabulary, lengths within limits). No allocation.
Status RunEncoder(Translator::Impl& t, const TokenSpan* sources, size_t batch);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_ENCODER_H_
