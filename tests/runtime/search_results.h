// tests/runtime/search_results.h: a Translator's hypotheses copied out of its arena (a
// HypothesisView is valid only until the next call), for the search tests to compare calls.
// Tests only.
#ifndef HEADWISE_TESTS_RUNTIME_SEARCH_RESULTS_H_
#define HEADWISE_TESTS_RUNTIME_SEARCH_RESULTS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "headwise/headwise.hpp"

namespace headwise::testing {

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

#endif  // HEADWISE_TESTS_RUNTIME_SEARCH_RESULTS_H_
