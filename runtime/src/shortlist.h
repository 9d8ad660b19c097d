// runtime/src/shortlist.h: the output layer (lm_head) over a vocabulary shortlist for one
// call (format/shortlist.h defines a line's allowed pieces), as Marian's lexical shortlists and
// CTranslate2's vocabulary map do, but restricted per line.
//
// Per TranslateIds call, before decoding, Prepare computes the union of the batch's allowed
// pieces (all lines of the batch, ascending), gathers what the product needs into the arena,
// and records each line's own list (the pieces format/shortlist.h allows for that line alone:
// the frequent ids, EOS, UNK, the lists of its source ids, its target prefix's ids) as
// positions in the union. Each decoder step then runs Run instead of the full lm_head: the
// product runs once over the union for all rows, and each row keeps the logits of its own
// line's list only; every other id of the row is -inf. So the searches (greedy.cc, beam.cc,
// sampler.cc) run unchanged over vocab-sized rows, and a row is exactly the row its line gets
// when translated alone: the log-softmax normaliser is over the line's list (LogSumExp gathers
// it in id order, as a batch of one gathers its union), argmax, beam ranking and sampling only
// see the line's ids, ties still go to the lower id. A translation never depends on the other
// lines of its call (Marian's and CTranslate2's batch unions do: there a line can produce a
// neighbour's piece, and its scores are normalised over the neighbours' pieces too).
//
// Exactness: the logit of an id in the union is the one the full product gives wherever the
// full product runs the same kernel on one output channel at a time, and it does not depend on
// which other ids the union holds:
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
// Writing a row (every weight format): the product writes the union's logits to a compact
// output, and each row receives only its own line's ids from it, after resetting the ids of
// the line it held before to -inf when the search gave the row to another sentence (rows are
// compacted as sentences finish), so a step costs one line's ids per row rather than the
// union's (which at 32 lines is about three lines' worth).
//
// Memory (planned by LayoutShortlist from the limits): marks [V] bytes and the union's ids
// [C] plus runs [3 C], one row of gathered logits [C] floats, the lines' lists [B, L] and
// sizes [B], the compact output [R, C] floats and each row's line [R]; I8: [C, d] int8 rows
// (room for their packed layout, Int8VnniPackedBytes(C, d)), [C] scales and biases; F16:
// [C, d] floats.
// C = min(V, frequent + 2 + min(V, B * S) * longest + min(V, B * T)) bounds the union and
// L = min(C, frequent + 2 + min(V, S) * longest + min(V, T)) one line's list (the last terms
// for the target prefixes' ids). No allocation after Create.
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
  float* out = nullptr;          // [R, C] the union's logits before the scatter
  int32_t* row_line = nullptr;   // [R] the line whose ids logits row r holds (-1: none)
  float* w32 = nullptr;          // F16: [C, d] widened rows
  float* row = nullptr;          // [C] one row's line logits (LogSumExp)
  size_t max_lines = 0;          // B
  size_t line_capacity = 0;      // L
  int32_t* line_pos = nullptr;   // [B, L] each line's list: positions in `ids`, ascending
  int32_t* line_size = nullptr;  // [B]
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

  // The union of the `batch` lines' allowed pieces (sources validated: ids inside the
  // vocabulary; EOS and UNK; the ids of their target prefixes, null: none, validated) and each
  // line's own list (line s = sources[s]); gathers the rows; sets logits rows [0, rows) to -inf
  // (rows <= R, batch <= B). No allocation.
  void Prepare(const TokenSpan* sources, const TokenSpan* prefixes, size_t batch, float* logits,
               size_t rows);

  // Takes the union of `from`'s last Prepare (a batch lane, lanes.h: this operator's buffers
  // point at `from`'s union and gathered rows, with scratch of its own for the product's output,
  // LogSumExp and the lines' lists), records the lists of this lane's `batch` lines (each
  // inside `from`'s union: the lane's lines are some of the lines `from` prepared) and sets
  // logits rows [0, rows) to -inf (rows <= this operator's R). `from` must not Prepare again
  // while this operator runs. No allocation.
  void AdoptUnion(const ShortlistOutput& from, const TokenSpan* sources, const TokenSpan* prefixes,
                  size_t batch, float* logits, size_t rows);

  // Logits of `rows` rows (x: [rows, d]; row r decodes line line_of_row[r]) into
  // logits + r * V: the product's value for the ids of the row's line, -inf for the union's
  // other ids; ids outside the union untouched (Prepare set them to -inf). No allocation.
  Status Run(size_t rows, const float* x, const int32_t* line_of_row, float* logits,
             Workers workers) const;

  // The union of the last Prepare: its size and its ids ascending.
  size_t size() const { return size_; }
  const int32_t* ids() const { return buf_->ids; }
  // Line `line`'s list: its size, its k-th id (ascending in k), and whether it holds `id`
  // (binary search).
  size_t LineSize(size_t line) const { return static_cast<size_t>(buf_->line_size[line]); }
  int32_t LineId(size_t line, size_t k) const {
    return buf_->ids[buf_->line_pos[line * buf_->line_capacity + k]];
  }
  bool Allows(size_t line, size_t id) const;

  // log(sum exp(x - max)) over line `line`'s entries of one vocab-sized logits row (the others
  // are -inf and add nothing) and its max (kernels::LogSoftmaxNormalizer over the line's
  // logits gathered in id order: the value a batch of that line alone computes, and with every
  // id in the list exactly the full row's result).
  float LogSumExp(const float* logits, size_t line, float* max_out) const;
  // The logits the last LogSumExp gathered: [LineSize(line)] in the order of LineId(line, k).
  // Valid until the next LogSumExp on this operator.
  const float* GatheredLogits() const { return buf_->row; }

 private:
  void CollectLines(const TokenSpan* sources, const TokenSpan* prefixes, size_t batch);
  // The union's logits of `rows` rows into out [rows, size()].
  void RunFloat(size_t rows, const float* x, Workers workers) const;
  void RunInt8(size_t rows, const float* x, Workers workers) const;
  // out's row r into logits row r, kept to line line_of_row[r] (the header's "Writing a row").
  void ScatterLines(size_t rows, const int32_t* line_of_row, float* logits) const;

  const Model::Impl* model_ = nullptr;
  const ShortlistBuffers* buf_ = nullptr;
  const Int8Scratch* int8_ = nullptr;
  size_t size_ = 0;
  size_t runs_ = 0;
  bool packed_ = false;  // I8: w8 holds the union's rows packed (from lm_head's packed copy)
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_SHORTLIST_H_
