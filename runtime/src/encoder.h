// runtime/src/encoder.h: the encoder pass of one call and the cross-attention keys/values it
// feeds to the decoder.
#ifndef HEADWISE_RUNTIME_ENCODER_H_
#define HEADWISE_RUNTIME_ENCODER_H_

#include <cstddef>

#include "activations.h"
#include "headwise/headwise.hpp"
#include "network.h"

namespace headwise {

// The encoder's view of the arena (activations.h for the shapes). x .. kv are its phase
// scratch: the bytes are the decoder's scratch once the cross-attention K/V are written.
struct EncoderBuffers {
  SharedTables tables;
  float* x = nullptr;    // [N, d]
  float* qkv = nullptr;  // [N, 3 I_max]
  float* ctx = nullptr;  // [N, I_max]
  float* tmp = nullptr;  // [N, d]
  float* ffn = nullptr;  // [N, ffn]
  float* kv = nullptr;   // [N, 2 I_max cross]: the fused k|v projection before the transpose
  SourceRows source;     // written
  CrossKv cross;         // written
};

// Packs the `batch` sentences row after row (no padding: attention is run per sentence over its
// own rows, which is what the key padding mask computes), runs every encoder layer, then
// computes each decoder layer's cross-attention keys and values into buf.cross (head-major)
// once; every beam of a sentence reads the same rows. Sets buf.source. The sources must have
// been validated (ids in the vocabulary, lengths within limits). No allocation.
Status RunEncoder(const Network& net, const EncoderBuffers& buf, const TokenSpan* sources,
                  size_t batch);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_ENCODER_H_
