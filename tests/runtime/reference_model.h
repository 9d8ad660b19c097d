// tests/runtime/reference_model.h: the MarianMT math written out in plain double-precision
// loops straight from Hugging Face's modeling_marian.py, with no caches, no fusion and no
// packing, plus the search rules of headwise.hpp on top of it. The runtime is compared with
// this. Tests only.
#ifndef HEADWISE_TESTS_RUNTIME_REFERENCE_MODEL_H_
#define HEADWISE_TESTS_RUNTIME_REFERENCE_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/model_writer.h"
#include "headwise/headwise.hpp"  // SearchOptions

namespace headwise::testing {

using Matrix = std::vector<double>;  // row-major [rows, cols]

class ReferenceModel {
 public:
  explicit ReferenceModel(const ModelSpec& spec);

  // Marian sinusoidal table [positions, d_model] (column slices as the Python code takes them).
  static Matrix Positions(size_t positions, size_t dim);

  // embed * scale + positions 0.. for `ids`.
  Matrix Embed(const std::string& table, const std::vector<int32_t>& ids) const;
  Matrix EncoderLayer(size_t layer, const Matrix& x, size_t len) const;
  Matrix Encode(const std::vector<int32_t>& source) const;
  // Logits [dec_in.size(), V] of the decoder fed dec_in (decoder start first), full causal
  // recomputation, PAD not masked.
  Matrix DecoderLogits(const Matrix& encoded, size_t src_len, const std::vector<int32_t>& dec_in) const;

  size_t vocab() const { return spec_.config.vocab_size; }
  size_t d_model() const { return spec_.config.d_model; }
  const ModelSpec& spec() const { return spec_; }

 private:
  const std::vector<float>& W(const std::string& name) const;
  // y = x W^T + b for x [rows, in], W [out, in].
  Matrix Linear(const Matrix& x, size_t rows, const std::string& prefix) const;
  // Attention of block `prefix` with query input x [q_rows, d] over kv input [k_rows, d].
  Matrix Attention(const std::string& prefix, size_t num_heads, size_t head_dim, const Matrix& x,
                   size_t q_rows, const Matrix& kv, size_t k_rows, bool causal) const;
  void AddNorm(Matrix& x, const Matrix& y, size_t rows, const std::string& norm) const;
  Matrix FeedForward(const Matrix& x, size_t rows, const std::string& layer) const;

  ModelSpec spec_;
  std::map<std::string, const std::vector<float>*> tensors_;
};

struct ReferenceHypothesis {
  std::vector<int32_t> ids;  // EOS excluded
  double score = 0;          // normalised
  bool finished = false;
};

// Greedy and beam search exactly as include/headwise/headwise.hpp words them (beam_size,
// num_hypotheses for the stopping rule, length_penalty, beam_stop of `options`), recomputing
// the decoder from scratch for every prefix. Beam returns all hypotheses, ordered best first.
// `allowed` (ascending ids) non-null: a vocabulary shortlist's union; every other token's logit
// is -inf (log-softmax over the union) and it is never a candidate. `prefix` non-null: a target
// prefix (headwise.hpp, "Target prefix"): its first prefix->size() steps append its ids to the
// one live beam, adding their log-probabilities, and finish nothing. options.min_length leaves
// EOS out of the candidates below it; options.sample (beam_size 1) draws each free step's id by
// headwise.hpp's "Sampling" rule over the double log-probabilities.
std::vector<ReferenceHypothesis> ReferenceSearch(const ReferenceModel& model,
                                                 const std::vector<int32_t>& source,
                                                 const SearchOptions& options, size_t max_length,
                                                 const std::vector<int32_t>* allowed = nullptr,
                                                 const std::vector<int32_t>* prefix = nullptr);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_RUNTIME_REFERENCE_MODEL_H_
