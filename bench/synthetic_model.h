// bench/synthetic_model.h: the benchmarks' preset of the shared synthetic-model builder
// (tests/support/synthetic_model.h): models of a given size and head layout with seeded random
// weights, serialized and loaded from a temporary file with Model::Load.
// The weights are random, so only speed and memory are meaningful, never the translations;
// the EOS logit is biased down so greedy decoding always runs to the requested length.
#ifndef HEADWISE_BENCH_SYNTHETIC_MODEL_H_
#define HEADWISE_BENCH_SYNTHETIC_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/model_ir.h"
#include "headwise/headwise.hpp"
#include "tests/support/synthetic_model.h"

namespace headwise::bench {

struct ModelSize {
  const char* name;
  uint32_t d_model, encoder_layers, decoder_layers, heads, ffn, vocab;
};

// The shipped model (models/en-de): d 256, 6 + 3 layers, 8 heads, ffn 1024, vocab 8000.
inline constexpr ModelSize kShipped{"shipped", 256, 6, 3, 8, 1024, 8000};
// Transformer-base: d 512, 6 + 6 layers, 8 heads, ffn 2048, vocab 32000.
inline constexpr ModelSize kBase{"base", 512, 6, 6, 8, 2048, 32000};
// A few-KB model for the CI smoke run.
inline constexpr ModelSize kTiny{"tiny", 32, 2, 2, 4, 64, 100};

struct SyntheticOptions {
  ModelSize size = kShipped;
  // Heads kept in every encoder self-attention block, and in every decoder self- and
  // cross-attention block (the first k source heads).
  uint32_t encoder_heads = 8;
  uint32_t decoder_self_heads = 8;
  uint32_t decoder_cross_heads = 8;
  uint32_t seed = 1;
  WeightFormat weights = WeightFormat::kF32;
  // A vocabulary shortlist sized like the shipped model's (SyntheticShortlist): Translators use
  // it unless TranslatorLimits::use_shortlist is false.
  bool shortlist = false;
};

// The benchmarks' synthetic shortlist for a vocabulary: 500 frequent pieces and 30 per source
// piece, drawn at random, so a 20-token source allows about 1,060 pieces, as the real shortlist
// of the shipped model (headwise-train shortlist's defaults, top 100 + 500 frequent, on the
// train split) allows 1,049 on average for a test-split line (its --report-split test).
inline constexpr uint32_t kShortlistFrequent = 500;
inline constexpr uint32_t kShortlistPerSource = 30;

// Special ids of every synthetic model.
inline constexpr int32_t kEos = 0;
inline constexpr int32_t kUnk = 1;
inline int32_t PadId(const ModelSize& s) { return static_cast<int32_t>(s.vocab) - 1; }

ModelSpec MakeSyntheticSpec(const SyntheticOptions& options);

// The Model of LoadSynthetic (only `model` is set: the file's mapping holds the bytes).
// Translators must be destroyed before the LoadedModel.
using LoadedModel = testing::LoadedModel;

// Aborts with a message on any error (benchmarks have no other way to fail a setup).
// LoadSynthetic loads the model as a user does, from a file (LoadSyntheticFile below), so every
// benchmark of a synthetic model runs the paths a user's model runs (int8 on the packed copies
// where this CPU packs them).
std::unique_ptr<LoadedModel> LoadSynthetic(const SyntheticOptions& options);
std::vector<uint8_t> SerializeSynthetic(const SyntheticOptions& options);

// Writes `image` to /tmp/headwise_bench_PID_TAG.hwm and returns the path (the caller removes it).
std::string WriteTemp(const std::vector<uint8_t>& image, const std::string& tag);

// The model as a user runs it: serialized, written to a temporary file, loaded with Model::Load
// (mapped; where int8_packed_store.h packs, the int8 matrices are read packed) and the file
// unlinked (the mapping keeps its pages).
std::shared_ptr<const Model> LoadSyntheticFile(const SyntheticOptions& options);

// Deterministic source ids: `length - 1` ids in [2, vocab - 1), then EOS.
std::vector<int32_t> SyntheticSource(const ModelSize& size, size_t length, uint32_t seed);

// Multiply-adds of one greedy translation of `batch` sources of `src_len` tokens producing
// `steps` tokens (matrix products and attention), for "latency vs work" comparisons.
double TranslationMacs(const SyntheticOptions& options, size_t batch, size_t src_len,
                       size_t steps);

[[noreturn]] void Die(const std::string& what);

}  // namespace headwise::bench

#endif  // HEADWISE_BENCH_SYNTHETIC_MODEL_H_
