// runtime/src/decoder.h: one incremental decoder step for a set of rows, and the cache copy a
// beam needs, behind the Decoder the searches run.
#ifndef HEADWISE_RUNTIME_DECODER_H_
#define HEADWISE_RUNTIME_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "activations.h"
#include "network.h"

namespace headwise {

// The decoder's view of the arena (activations.h for the shapes). y .. ffn are its phase
// scratch (the encoder's bytes, dead by the first step).
struct DecoderBuffers {
  SharedTables tables;
  float* y = nullptr;    // [R, d]
  float* qkv = nullptr;  // [R, 3 I_max] (also the cross-attention q)
  float* ctx = nullptr;  // [R, I_max]
  float* tmp = nullptr;  // [R, d]
  float* ffn = nullptr;  // [R, ffn]
  // The self-attention cache per decoder layer, [R slots, heads, T, hd] for K and for V
  // (head-major within a slot so one head's keys stream through the cache); null where the
  // block has no heads. Written by the steps at (row's slot, step).
  std::vector<float*> self_k;
  std::vector<float*> self_v;
  // [R slots, T]: the slot whose cache holds position p of slot s's history (s itself for the
  // positions it wrote; a beam's parent's slots for the positions before it split off, set by
  // ShareCacheSlot). A slot's position p is written at step p only and read at later steps,
  // so a slot taken over by another beam keeps every position other beams still read.
  int32_t* kv_block = nullptr;
  size_t max_length = 0;  // T: positions per slot
  SourceRows source;      // read: what RunEncoder wrote
  CrossKv cross;          // read: what RunEncoder wrote
  StepRows rows;          // read: set by the search before each step
};

// Binds the network and the decoder's buffers for one call; what greedy and beam search run.
// Cheap to make (two references), no allocation.
class ShortlistOutput;

class Decoder {
 public:
  // `shortlist` non-null: Step computes the output layer over its union only, each row kept to
  // its sentence's own list (shortlist.h).
  Decoder(const Network& net, const DecoderBuffers& buf, const ShortlistOutput* shortlist = nullptr)
      : net_(net), buf_(buf), shortlist_(shortlist) {}

  // The rows the search fills in before each Step.
  const StepRows& rows() const { return buf_.rows; }
  // Where the search adds its time (op_profile.h); null when not profiling.
  OpProfile* profile() const { return net_.profile; }
  // The shortlist whose union Step computes (null: the full vocabulary).
  const ShortlistOutput* shortlist() const { return shortlist_; }

  // Runs the decoder for `rows` rows at position `step` (all rows of a call advance together).
  // Row r feeds rows().token[r], appends its self-attention K/V at position `step` of cache
  // slot rows().slot[r] and attends to positions [0, step] of that slot, and cross-attends to
  // the source rows of sentence rows().sentence[r] (RunEncoder must have run). Writes the
  // unmasked logits of row r to logits + r * vocab_size (with a shortlist: those of its
  // sentence's list, the others -inf: ShortlistOutput::Run and Prepare). No allocation.
  Status Step(size_t rows, size_t step, float* logits) const;

  // Gives slot `to` the history of slot `from`, positions [0, length) (a beam that continues
  // from a parent another beam already continues): `to` reads them where `from` reads them, no
  // cache values move. from != to; the next Step writes position `length` of `to`.
  void ShareCacheSlot(size_t from, size_t to, size_t length) const;

 private:
  Status SelfAttention(size_t l, size_t rows, size_t step) const;
  Status CrossAttention(size_t l, size_t rows) const;

  const Network& net_;
  const DecoderBuffers& buf_;
  const ShortlistOutput* shortlist_;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_DECODER_H_
