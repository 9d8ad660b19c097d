// tests/runtime/search_test_support.h: what the tests of the search options (target prefixes,
// sampling, minimum length) share: their model, limits and shortlist model, and a Translator's
// hypotheses copied out of its arena (a HypothesisView is valid only until the next call) to
// compare calls. Tests only.
#ifndef HEADWISE_TESTS_RUNTIME_SEARCH_TEST_SUPPORT_H_
#define HEADWISE_TESTS_RUNTIME_SEARCH_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "headwise/headwise.hpp"
#include "tests/runtime/test_model.h"

namespace headwise::testing {

inline constexpr int kSearchMaxTarget = 12;

// The pruned test model (test_model.h) with EOS likely enough that some hypotheses end within
// kSearchMaxTarget tokens.
inline ModelOptions SearchModelOptions(WeightFormat weights = WeightFormat::kF32) {
  ModelOptions o = PrunedModelOptions();
  o.eos_bias = 0.5f;
  o.weights = weights;
  return o;
}

// Batch 4, 16 source tokens, kSearchMaxTarget target tokens, beam 4.
inline TranslatorLimits SearchLimits(int threads = 1, bool shortlist = true) {
  TranslatorLimits l;
  l.max_batch = 4;
  l.max_source_tokens = 16;
  l.max_target_tokens = kSearchMaxTarget;
  l.max_beam = 4;
  l.num_threads = threads;
  l.use_shortlist = shortlist;
  return l;
}

// SearchModelOptions' model with a synthetic shortlist (4 frequent pieces, 3 per source
// piece), loaded; fails the test (null) on an error.
inline std::unique_ptr<LoadedModel> LoadShortlistModel(const ModelOptions& o) {
  ModelSpec spec = MakeSpec(o);
  spec.shortlist = MakeSyntheticShortlist(o.vocab, 4, 3, 17);
  auto loaded = LoadSpec(std::move(spec));
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? std::move(loaded).value() : nullptr;
}

struct Hyp {
  std::vector<int32_t> ids;
  float score = 0.0f;
  bool finished = false;
  bool operator==(const Hyp& o) const {
    return ids == o.ids && score == o.score && finished == o.finished;
  }
};

// Every hypothesis of `sentence` from the last call, best first.
inline std::vector<Hyp> Results(const Translator& t, size_t sentence) {
  std::vector<Hyp> out;
  for (size_t k = 0; k < t.num_hypotheses(sentence); ++k) {
    const HypothesisView h = t.hypothesis(sentence, k);
    out.push_back({std::vector<int32_t>(h.ids, h.ids + h.size), h.score, h.finished});
  }
  return out;
}

// The same ids, score bits and flag, hypothesis by hypothesis.
inline void ExpectSame(const std::vector<Hyp>& got, const std::vector<Hyp>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].ids, want[k].ids) << "hypothesis " << k;
    EXPECT_EQ(got[k].score, want[k].score) << "hypothesis " << k;
    EXPECT_EQ(got[k].finished, want[k].finished) << "hypothesis " << k;
  }
}

// Translator::Create, failing the test (and returning null) on an error.
inline std::unique_ptr<Translator> MakeTranslator(const std::shared_ptr<const Model>& model,
                                                  const TranslatorLimits& limits) {
  auto t = Translator::Create(model, limits);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_RUNTIME_SEARCH_TEST_SUPPORT_H_
