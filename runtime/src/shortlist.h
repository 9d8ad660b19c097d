// runtime/src/shortlist.h: the output layer (lm_head) over a vocabulary shortlist's union for
// one call (format/shortlist.h defines the union), as Marian's lexical shortlists and
// CTranslate2's vocabulary map do.
//
// Per TranslateIds call, before decoding, Prepare computes the union of the batch's source
// pieces (all lines of the batch, so every row and beam of the call shares one subset),
// ascending, gathers what the product needs into the arena, and sets the logits rows the call
// can use to -inf. Each decoder step then runs Run instead of the full lm_head: it writes the
// logits of the union's ids only and leaves every other id at -inf, so the searches
// (greedy.cc, beam.cc) run unchanged over vocab-sized rows: the log-softmax normaliser is over
// the union (-inf contributes nothing), argmax and beam ranking only see the union's ids, ties
// still go to the lower id.
//
// Exactness: the logit of an id in the union is the one the full product gives wherever the
// full product runs the same kernel on one output channel at a time:
//   - I8 weights: the union's int8 rows, their scales and bias entries are gathered into the
//     arena once per call, and the int8 kernel (kernels/int8_gemm.h; exact int32 sums and the
//     same scalar finish on every kernel family) runs over them; identical to the full product
//     on every CPU. Where lm_head's operator runs on the Model's packed copy (kernels/int8_packed.h), the rows are
//     gathered from it still packed (4-byte groups) and the packed kernel runs over them.
//   - F32 weights: kernels::F32Gemv on the model's rows in place, one call per run of
//     consecutive ids and row; identical to the full product wherever that reads the weights
//     in place (x86 with AVX2 + FMA: the gemv and the several-row kernels::F32Gemm share one
//     summation order); where the full product is XNNPACK's (Arm, x86 without AVX2) the two
//     differ by float rounding only.
//   - F16 weights: the union's rows widened to F32 once per call (the same exact widening as
//     the F32 fallback), then as F32. With fp16 arithmetic on (Arm FEAT_FP16) the full product
//     rounds to F16, the union's does not.
//
// Memory (planned by LayoutShortlist from the limits): marks [V] bytes and the union's ids
// [C] plus runs [3 C], one row of union logits [C] floats; I8: [C, d] int8 rows (room for their
// packed layout, Int8VnniPackedBytes(C, d)), [C] scales and biases and the compact output
// [R, C]; F16: [C, d] floats. C = min(V, frequent + 2 + min(V, B * S) * longest list
// + min(V, B * T)), the last term for the target prefixes' ids.
// No allocation after Create.
#ifndef HEADWISE_RUNTIME_SHORTLIST_H_
#define HEADWISE_RUNTIME_SHORTLIST_H_

#include <cstddef>
#include <cstdint>

#include "arena.h"
#include "fc/fully_connected.h"
#include "format/shortlist.h"
#include "headwise/headwise.hpp"
#include "model_impl.h"
#include "parallel.h"


namespace headwise {

// The arena part; all null when the shortlist is off.
struct ShortlistBuffers {
  size_t capacity = 0;           // C
  size_t max_rows = 0;           // R
  uint8_t* marks = nullptr;      // [V]
  int32_t* ids = nullptr;        // [C] the union, ascending
  int32_t* run_first = nullptr;  // [C] first id of each run of consecutive ids
  int32_t* run_length = nullptr; // [C]
  int32_t* run_offset = nullptr; // [C] index in `ids` of each run's first id
  int8_t* w8 = nullptr;          // I8: [C, d] gathered rows, or their packed layout
  float* w8_scale = nullptr;     // I8: [C]
  float* bias = nullptr;         // I8: [C] gathered final_logits_bias
  float* out = nullptr;          // I8: [R, C] the union's logits before the scatter
  float* w32 = nullptr;          // F16: [C, d] widened rows
  float* row = nullptr;          // [C] one row's union logits (LogSumExp)
};

// Whether a Translator with these limits uses the model's shortlist.
bool ShortlistEnabled(const Model::Impl& model, const TranslatorLimits& limits);

// Takes the buffers from the carver (arena.h: measure, then carve). Only when enabled.
void LayoutShortlist(const Model::Impl& model, const TranslatorLimits& limits, ArenaCarver& c,
                     ShortlistBuffers* buf);

class ShortlistOutput {
 public:
  ShortlistOutput() = default;
  // `int8` is the int8 operators' scratch (I8 lm_head only); everything must outlive this.
  ShortlistOutput(const Model::Impl& model, const ShortlistBuffers& buf, const Int8Scratch* int8)
      : model_(&model), buf_(&buf), int8_(int8) {}

  bool valid() const { return model_ != nullptr; }

  // The union of the `batch` sources (validated: ids inside the vocabulary), EOS and UNK, and
  // the ids of their target prefixes (null: none; validated); gathers the rows; sets logits
  // rows [0, rows) to -inf (rows <= R). No allocation.
  void Prepare(const TokenSpan* sources, const TokenSpan* prefixes, size_t batch, float* logits,
               size_t rows);

  // Takes the union of `from`'s last Prepare (a batch lane, lanes.h: this operator's buffers
  // point at `from`'s union and gathered rows, with scratch of its own for the product's output
  // and LogSumExp) and sets logits rows [0, rows) to -inf (rows <= this operator's R). `from`
  // must not Prepare again while this operator runs. No allocation.
  void AdoptUnion(const ShortlistOutput& from, float* logits, size_t rows);

  // Logits of `rows` rows (x: [rows, d]) for the union's ids into logits + r * V; other ids
  // untouched. No allocation.
  Status Run(size_t rows, const float* x, float* logits, Workers workers) const;

  // The union of the last Prepare: its size, its ids ascending, and whether it holds `id`.
  size_t size() const { return size_; }
  const int32_t* ids() const { return buf_->ids; }
  bool Allows(size_t id) const { return buf_->marks[id] != 0; }

  // log(sum exp(x - max)) over the union's entries of one vocab-sized logits row (the others
  // are -inf and add nothing) and its max (kernels::LogSoftmaxNormalizer over the union's
  // logits gathered in id order: with every id in the union, exactly the full row's result).
  float LogSumExp(const float* logits, float* max_out) const;

 private:
  void RunFloat(size_t rows, const float* x, float* logits, Workers workers) const;
  void RunInt8(size_t rows, const float* x, float* logits, Workers workers) const;

  const Model::Impl* model_ = nullptr;
  const ShortlistBuffers* buf_ = nullptr;
  const Int8Scratch* int8_ = nullptr;
  size_t size_ = 0;
  size_t runs_ = 0;
  bool packed_ = false;  // I8: w8 holds the union's rows packed (from lm_head's packed copy)
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_SHORTLIST_H_
