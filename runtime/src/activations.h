// runtime/src/activations.h: the arena arrays that one stage of a translation writes and
// another reads. Each stage's own buffers struct (encoder.h, decoder.h, search.h) holds copies
// of these views; translator_plan.cc carves the arrays once and gives the same pointers to the
// writer and the readers, which is the only place they are wired together.
//
// Ownership: every pointer points into the Translator's arena and lives as long as it. The
// views themselves never own memory; the std::vectors hold one pointer per decoder layer and
// are filled once, at Translator::Create.
//
// Shapes use B = max_batch, S = max_source_tokens, T = max_target_tokens, K = max_beam,
// R = B * K decoder rows (= cache slots), N = B * S packed source rows, d = d_model,
// I = kept heads * head_dim of the block in question.
#ifndef HEADWISE_RUNTIME_ACTIVATIONS_H_
#define HEADWISE_RUNTIME_ACTIVATIONS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace headwise {

// Inputs every layer reads: the sinusoidal table [max(S, T), d] and the attention scratch
// [H_max, max(S, T)] (one row per kept head, heads run in parallel).
struct SharedTables {
  const float* positions = nullptr;
  float* scores = nullptr;
  size_t scores_stride = 0;  // max(S, T)
};

// Where each sentence of the current call sits in the packed source rows. Written by the
// encoder, read by the decoder's cross-attention.
struct SourceRows {
  int32_t* offset = nullptr;  // [B] first packed row of each sentence
  int32_t* length = nullptr;  // [B]
};

// Per decoder layer, head-major so that one head's keys (and values) are contiguous: the
// cross-attention K and V of the packed source [heads, N, hd]. Null where the block has no
// heads. Written by the encoder, read by every decoder step.
struct CrossKv {
  std::vector<float*> k;
  std::vector<float*> v;
  size_t rows = 0;  // N: rows per head
};

// The rows of the current decoder step, set by the search before each step.
struct StepRows {
  int32_t* token = nullptr;     // [R] token fed at this step
  int32_t* slot = nullptr;      // [R] cache slot the row reads and appends to
  int32_t* sentence = nullptr;  // [R] sentence whose source the row attends to
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_ACTIVATIONS_H_
