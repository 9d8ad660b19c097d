// Minimum length and random sampling (headwise.hpp, "Minimum length", "Sampling"): the draw
// (sampler.h) against a plain loop written from the header's words and against the
// probabilities it samples from; the searches against the plain reference search
// (reference_model.h) with and without a shortlist and a target prefix; a sentence's draws
// depend on its seed and source only (alone, in a batch, on lanes, in sorted batches, in any
// call order); top_k 1 is greedy; min_length holds EOS back and changes results; the
// refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sampler.h"
#include "tests/runtime/reference_model.h"
#include "tests/runtime/search_test_support.h"
#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

using testing::ExpectSame;
using testing::Hyp;
using testing::MakeTranslator;
using testing::ModelOptions;
using testing::Results;
using testing::SearchLimits;
using testing::SearchModelOptions;

constexpr int kMaxTarget = testing::kSearchMaxTarget;

SearchOptions Sampling(uint64_t seed, int top_k = 0, float top_p = 1.0f, float temperature = 1.0f) {
  SearchOptions so;
  so.sample = true;
  so.seed = seed;
  so.top_k = top_k;
  so.top_p = top_p;
  so.temperature = temperature;
  return so;
}

// headwise.hpp's steps 1-4 as plainly as they read: every candidate into one list, a full
// sort, cuts, float64 sums.
int32_t PlainDraw(const std::vector<float>& x, const SearchOptions& o, int32_t excluded, double u,
                  int32_t fallback) {
  std::vector<int32_t> c;
  for (size_t v = 0; v < x.size(); ++v) {
    if (std::isfinite(x[v]) && static_cast<int32_t>(v) != excluded) {
      c.push_back(static_cast<int32_t>(v));
    }
  }
  if (c.empty()) return fallback;
  float m = x[c[0]];
  for (int32_t v : c) m = std::max(m, x[v]);
  if (o.top_k > 0 || o.top_p < 1.0f) {
    std::sort(c.begin(), c.end(),
              [&](int32_t a, int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
    if (o.top_k > 0 && c.size() > static_cast<size_t>(o.top_k)) {
      c.resize(static_cast<size_t>(o.top_k));
    }
  }
  std::vector<double> w;
  for (int32_t v : c) w.push_back(std::exp((double{x[v]} - m) / o.temperature));
  double total = 0;
  if (o.top_k > 0) {
    for (double wi : w) total += wi;
  } else {  // every candidate, summed in ascending id order
    for (size_t v = 0; v < x.size(); ++v) {
      if (std::isfinite(x[v]) && static_cast<int32_t>(v) != excluded) {
        total += std::exp((double{x[v]} - m) / o.temperature);
      }
    }
  }
  if (o.top_p < 1.0f) {
    double sum = 0;
    size_t n = 0;
    while (n < c.size()) {
      sum += w[n++];
      if (sum >= o.top_p * total) break;
    }
    c.resize(n);
    total = sum;
  }
  double sum = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    sum += w[i];
    if (sum > u * total) return c[i];
  }
  return c.back();
}

TEST(Sampler, MixIsSplitMix64) {
  // SplitMix64 seeded with 1234567: its first three outputs (the published test vector).
  uint64_t state = 1234567;
  const uint64_t want[] = {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull};
  for (uint64_t w : want) {
    EXPECT_EQ(SampleMix(state), w);
    state += 0x9E3779B97F4A7C15ull;
  }
  const int32_t ids[] = {5, 9, 2};
  const uint64_t key = SampleKey(7, {ids, 3});
  EXPECT_EQ(key, SampleMix(SampleMix(SampleMix(SampleMix(7) ^ 5u) ^ 9u) ^ 2u));
  EXPECT_EQ(SampleUniform(key, 4), std::ldexp(static_cast<double>(SampleMix(key + 4) >> 11), -53));
  EXPECT_NE(SampleKey(7, {ids, 2}), key);
  EXPECT_NE(SampleKey(8, {ids, 3}), key);
}

TEST(Sampler, DrawMatchesThePlainRuleOnRandomRows) {
  std::mt19937 rng(3);
  std::normal_distribution<float> logit(0.0f, 3.0f);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  size_t checked = 0;
  // 300 ids: nuclei beyond the first sorted heads of 64 and 128.
  for (size_t V : {size_t{37}, size_t{300}}) {
    std::vector<int32_t> order(V);
    std::vector<double> weight(V);
    const SampleScratch scratch{order.data(), weight.data()};
    for (int top_k : {0, 1, 3, 36, 37, 50, 299}) {
      for (float top_p : {1.0f, 0.999f, 0.9f, 0.5f, 1e-6f}) {
        for (float temperature : {0.25f, 1.0f, 3.0f}) {
          const SearchOptions o = Sampling(0, top_k, top_p, temperature);
          for (int row = 0; row < 20; ++row) {
            std::vector<float> x(V);
            for (float& v : x) v = logit(rng);
            x[row % V] = -INFINITY;  // PAD or outside a shortlist
            if (row % 3 == 0) x[(row + 5) % V] = x[(row + 6) % V];  // a tie
            if (row % 4 == 0) x[(row + 9) % V] = NAN;
            const int32_t excluded = row % 2 == 0 ? static_cast<int32_t>(row % 7) : -1;
            const double u = row == 0 ? 0.0 : row == 1 ? std::nextafter(1.0, 0.0) : uniform(rng);
            ASSERT_EQ(DrawToken(x.data(), V, o, excluded, u, 99, scratch),
                      PlainDraw(x, o, excluded, u, 99))
                << "top_k " << top_k << " top_p " << top_p << " temperature " << temperature
                << " row " << row;
            ++checked;
          }
        }
      }
    }
    // No candidate: the fallback.
    std::vector<float> none(V, -INFINITY);
    none[4] = 1.0f;
    EXPECT_EQ(DrawToken(none.data(), V, Sampling(0), 4, 0.5, 99, scratch), 99);
  }
  EXPECT_EQ(checked, 2u * 7u * 5u * 3u * 20u);
}

// Over many uniform numbers the draws follow the weights the rule names: softmax(x / T) over
// the top_k, renormalised (chi-square against the expected counts).
TEST(Sampler, DrawsFollowTheTemperedTopKDistribution) {
  const std::vector<float> x = {1.0f, 2.5f, -INFINITY, 0.0f, 2.0f, -1.0f, 1.5f};
  std::vector<int32_t> order(x.size());
  std::vector<double> weight(x.size());
  const SampleScratch scratch{order.data(), weight.data()};
  for (const SearchOptions& o : {Sampling(0, 0, 1.0f, 1.0f), Sampling(0, 3, 1.0f, 0.5f),
                                 Sampling(0, 0, 1.0f, 2.0f)}) {
    std::vector<int32_t> ids;
    for (size_t v = 0; v < x.size(); ++v) {
      if (std::isfinite(x[v])) ids.push_back(static_cast<int32_t>(v));
    }
    std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return x[a] > x[b]; });
    if (o.top_k > 0) ids.resize(static_cast<size_t>(o.top_k));
    std::map<int32_t, double> p;
    double total = 0;
    for (int32_t v : ids) total += p[v] = std::exp(x[v] / o.temperature);
    const int n = 40000;
    std::map<int32_t, int> count;
    const int32_t src[] = {1, 2, 3};
    const uint64_t key = SampleKey(11, {src, 3});
    for (int i = 0; i < n; ++i) {
      const double u = SampleUniform(key, static_cast<size_t>(i));
      ++count[DrawToken(x.data(), x.size(), o, -1, u, -1, scratch)];
    }
    double chi2 = 0;
    for (const auto& [v, c] : count) {
      ASSERT_TRUE(p.count(v)) << "drew id " << v << ", outside the top " << o.top_k;
    }
    for (const auto& [v, pv] : p) {
      const double expected = n * pv / total;
      chi2 += (count[v] - expected) * (count[v] - expected) / expected;
    }
    // Fixed numbers, so a fixed statistic; 5 degrees of freedom at most: p = 1e-4 at 25.7.
    EXPECT_LT(chi2, 25.7) << "top_k " << o.top_k << " temperature " << o.temperature;
  }
}

void ExpectReference(const Translator& t, const testing::ReferenceModel& ref,
                     const std::vector<int32_t>& src, const SearchOptions& so,
                     const std::vector<int32_t>* allowed = nullptr,
                     const std::vector<int32_t>* prefix = nullptr) {
  const auto want = testing::ReferenceSearch(ref, src, so, kMaxTarget, allowed, prefix);
  const size_t n = std::min<size_t>(want.size(), static_cast<size_t>(so.num_hypotheses));
  ASSERT_EQ(t.num_hypotheses(0), n);
  for (size_t k = 0; k < n; ++k) {
    const HypothesisView h = t.hypothesis(0, k);
    EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.size), want[k].ids) << "hypothesis " << k;
    EXPECT_NEAR(h.score, want[k].score, 1e-4) << "hypothesis " << k;
    EXPECT_EQ(h.finished, want[k].finished) << "hypothesis " << k;
  }
}

std::vector<SearchOptions> SampledSearches() {
  std::vector<SearchOptions> out = {Sampling(1), Sampling(2, 5), Sampling(3, 0, 0.8f),
                                    Sampling(4, 8, 0.9f, 0.7f), Sampling(5, 0, 1.0f, 1.6f)};
  SearchOptions min = Sampling(6, 0, 1.0f, 1.2f);
  min.min_length = 5;
  out.push_back(min);
  return out;
}

std::string Name(const SearchOptions& so) {
  return "seed " + std::to_string(so.seed) + " top_k " + std::to_string(so.top_k) + " top_p " +
         std::to_string(so.top_p) + " temperature " + std::to_string(so.temperature) +
         " min_length " + std::to_string(so.min_length);
}

TEST(Sampling, MatchesTheReferenceSearch) {
  const ModelOptions o = SearchModelOptions();
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  const testing::ReferenceModel ref(tm->spec);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  for (const SearchOptions& so : SampledSearches()) {
    for (uint32_t i = 0; i < 4; ++i) {
      SCOPED_TRACE(Name(so) + " source " + std::to_string(i));
      const std::vector<int32_t> src = testing::RandomSource(o, 2 + 3 * i, 200 + i);
      const TokenSpan s{src.data(), src.size()};
      ASSERT_TRUE(t->TranslateIds(&s, 1, so).ok());
      ExpectReference(*t, ref, src, so);
    }
  }
}

TEST(Sampling, MatchesTheReferenceWithAShortlistAndAPrefix) {
  const ModelOptions o = SearchModelOptions();
  const auto m = testing::LoadShortlistModel(o);
  ASSERT_NE(m, nullptr);
  const testing::ReferenceModel ref(m->spec);
  auto t = MakeTranslator(m->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->uses_shortlist());
  for (const SearchOptions& so : SampledSearches()) {
    for (uint32_t i = 0; i < 3; ++i) {
      SCOPED_TRACE(Name(so) + " source " + std::to_string(i));
      const std::vector<int32_t> src = testing::RandomSource(o, 3 + 2 * i, 300 + i);
      auto pieces = m->model->ShortlistPieces({src});
      ASSERT_TRUE(pieces.ok());
      std::vector<int32_t> prefix;  // i ids of the union, none PAD or EOS
      for (int32_t v : *pieces) {
        if (prefix.size() < i && v != o.pad && v != o.eos) prefix.push_back(v);
      }
      const TokenSpan s{src.data(), src.size()}, p{prefix.data(), prefix.size()};
      ASSERT_TRUE(t->TranslateIds(&s, 1, so, &p).ok());
      ExpectReference(*t, ref, src, so, &*pieces, &prefix);
    }
  }
}

// A sentence's draws depend on its seed and source only: the same result alone, in a batch of
// other sentences, on batch lanes, in TranslateIdsEach's sorted batches, and again later.
TEST(Sampling, ALinesDrawsDependOnItsSeedAndSourceOnly) {
  // int8: exact products, so any batch and any lane give the same bits.
  const ModelOptions o = SearchModelOptions(WeightFormat::kI8);
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  TranslatorLimits lanes = SearchLimits(2);
  lanes.batch_lanes = 2;
  auto single = MakeTranslator(tm->model, SearchLimits());
  auto batched = MakeTranslator(tm->model, SearchLimits());
  auto laned = MakeTranslator(tm->model, lanes);
  ASSERT_TRUE(single && batched && laned);
  std::vector<std::vector<int32_t>> sources;
  for (uint32_t i = 0; i < 4; ++i) sources.push_back(testing::RandomSource(o, 2 + 3 * i, 400 + i));
  sources[3] = sources[1];  // the same source twice: the same draws
  std::vector<TokenSpan> s;
  for (const auto& src : sources) s.push_back({src.data(), src.size()});
  for (const SearchOptions& so : SampledSearches()) {
    SCOPED_TRACE(Name(so));
    std::vector<std::vector<Hyp>> alone;
    for (size_t i = 0; i < s.size(); ++i) {
      ASSERT_TRUE(single->TranslateIds(&s[i], 1, so).ok());
      alone.push_back(Results(*single, 0));
    }
    EXPECT_EQ(alone[3], alone[1]);
    ASSERT_TRUE(batched->TranslateIds(s.data(), s.size(), so).ok());
    ASSERT_TRUE(laned->TranslateIds(s.data(), s.size(), so).ok());
    BatchOptions sorted;
    sorted.max_lines = 3;
    ASSERT_TRUE(single->TranslateIdsEach(s.data(), s.size(), so, sorted).ok());
    for (size_t i = 0; i < s.size(); ++i) {
      SCOPED_TRACE("line " + std::to_string(i));
      EXPECT_EQ(Results(*batched, i), alone[i]);
      EXPECT_EQ(Results(*laned, i), alone[i]);
      EXPECT_EQ(Results(*single, i), alone[i]);
    }
    ASSERT_TRUE(single->TranslateIds(&s[0], 1, so).ok());
    EXPECT_EQ(Results(*single, 0), alone[0]);
  }
}

// Seeds give different translations, each a valid hypothesis (ids in the vocabulary, never PAD
// or EOS; its score the model's log-probability, checked against the reference above); top_k 1
// is greedy exactly (the same ids and score) whatever the seed and temperature.
TEST(Sampling, SeedsVaryTheTranslationAndTopKOneIsGreedy) {
  const ModelOptions o = SearchModelOptions();
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  const std::vector<int32_t> src = testing::RandomSource(o, 6, 500);
  const TokenSpan s{src.data(), src.size()};
  ASSERT_TRUE(t->TranslateIds(&s, 1, SearchOptions{}).ok());
  const std::vector<Hyp> greedy = Results(*t, 0);
  std::set<std::vector<int32_t>> seen;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    ASSERT_TRUE(t->TranslateIds(&s, 1, Sampling(seed, 0, 1.0f, 1.5f)).ok());
    const std::vector<Hyp> got = Results(*t, 0);
    ASSERT_EQ(got.size(), 1u);
    for (int32_t v : got[0].ids) {
      EXPECT_TRUE(v >= 0 && v < static_cast<int32_t>(o.vocab) && v != o.pad && v != o.eos) << v;
    }
    EXPECT_LE(got[0].score, 0.0f);
    seen.insert(got[0].ids);
    ASSERT_TRUE(t->TranslateIds(&s, 1, Sampling(seed, 1, 1.0f, 0.3f + 0.2f * seed)).ok());
    EXPECT_EQ(Results(*t, 0), greedy) << "seed " << seed;
  }
  EXPECT_GE(seen.size(), 4u) << "16 seeds gave " << seen.size() << " translations";
}

TEST(MinLength, GreedyAndBeamMatchTheReferenceAndHoldEosBack) {
  const ModelOptions o = testing::EarlyEosModelOptions();  // EOS early without min_length
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  const testing::ReferenceModel ref(tm->spec);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  size_t changed = 0;
  for (int beam : {1, 3}) {
    for (int min_length : {1, 4, 11}) {
      SearchOptions so;
      so.beam_size = beam;
      so.num_hypotheses = beam == 3 ? 2 : 1;
      so.min_length = min_length;
      SearchOptions plain = so;
      plain.min_length = 0;
      for (uint32_t i = 0; i < 4; ++i) {
        SCOPED_TRACE("beam " + std::to_string(beam) + " min_length " + std::to_string(min_length) +
                     " source " + std::to_string(i));
        const std::vector<int32_t> src = testing::RandomSource(o, 2 + 3 * i, 600 + i);
        const TokenSpan s{src.data(), src.size()};
        ASSERT_TRUE(t->TranslateIds(&s, 1, plain).ok());
        const std::vector<Hyp> before = Results(*t, 0);
        ASSERT_TRUE(t->TranslateIds(&s, 1, so).ok());
        ExpectReference(*t, ref, src, so);
        const std::vector<Hyp> got = Results(*t, 0);
        for (const Hyp& h : got) {
          EXPECT_GE(h.ids.size(), static_cast<size_t>(min_length));
        }
        changed += got != before;
      }
    }
  }
  EXPECT_GT(changed, 0u) << "min_length changed no result: the test does not exercise it";
}

TEST(Sampling, BadOptionsAreRefused) {
  const ModelOptions o = SearchModelOptions();
  auto tm = testing::BuildModel(o);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  const std::vector<int32_t> src = testing::RandomSource(o, 4, 700);
  const TokenSpan s{src.data(), src.size()};
  struct Case {
    SearchOptions options;
    const char* message;
  };
  std::vector<Case> cases;
  auto add = [&](auto edit, const char* message) {
    SearchOptions so = Sampling(1);
    edit(so);
    cases.push_back({so, message});
  };
  add([](SearchOptions& so) { so.beam_size = 2; }, "SearchOptions.sample needs beam_size 1");
  add([](SearchOptions& so) { so.top_k = -1; }, "SearchOptions.top_k -1 must be >= 0");
  add([](SearchOptions& so) { so.top_p = 0.0f; }, "SearchOptions.top_p");
  add([](SearchOptions& so) { so.top_p = 1.5f; }, "must be in (0, 1]");
  add([](SearchOptions& so) { so.top_p = NAN; }, "SearchOptions.top_p");
  add([](SearchOptions& so) { so.temperature = 0.0f; }, "SearchOptions.temperature");
  add([](SearchOptions& so) { so.temperature = INFINITY; }, "must be finite and > 0");
  add([](SearchOptions& so) { so.temperature = -1.0f; }, "SearchOptions.temperature");
  add([](SearchOptions& so) { so.sample = false; so.seed = 0; so.top_k = 3; },
      "SearchOptions.top_k applies only to sampling");
  add([](SearchOptions& so) { so.sample = false; so.seed = 0; so.top_p = 0.5f; },
      "SearchOptions.top_p applies only to sampling");
  add([](SearchOptions& so) { so.sample = false; so.seed = 0; so.temperature = 0.5f; },
      "SearchOptions.temperature applies only to sampling");
  add([](SearchOptions& so) { so.sample = false; so.seed = 9; }, "SearchOptions.seed applies only");
  add([](SearchOptions& so) { so.min_length = -1; },
      "SearchOptions.min_length -1 must be in [0, max_length = 12)");
  add([](SearchOptions& so) { so.min_length = kMaxTarget; }, "SearchOptions.min_length 12");
  add([](SearchOptions& so) { so.max_length = 5; so.min_length = 5; },
      "must be in [0, max_length = 5)");
  for (const Case& c : cases) {
    const Status st = t->TranslateIds(&s, 1, c.options);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << c.message;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << st.message();
    auto text = t->Translate({"x"}, c.options);  // the text path checks before tokenizing
    ASSERT_FALSE(text.ok()) << c.message;
    EXPECT_EQ(text.status().code(), ErrorCode::kInvalidArgument) << text.status().ToString();
    EXPECT_NE(text.status().message().find(c.message), std::string::npos)
        << text.status().ToString();
  }
  SearchOptions edge = Sampling(1, 0, 1.0f, 1e-3f);
  edge.min_length = kMaxTarget - 1;
  EXPECT_TRUE(t->TranslateIds(&s, 1, edge).ok());
  const std::vector<Hyp> got = Results(*t, 0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GE(got[0].ids.size(), static_cast<size_t>(kMaxTarget - 1));
}

}  // namespace
}  // namespace headwise
