// Target prefixes on the token-id path (headwise.hpp, "Target prefix"): greedy and beam against
// the plain reference search forced through the same prefix, with and without a shortlist (the
// prefix's ids join the union); a prefix that repeats the model's own greedy start changes
// nothing; mixed batches, batch lanes and TranslateIdsEach give each line what it gets alone;
// the limits and refusals, for a whole call and for one line of TranslateIdsEach.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

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

// `length` random target ids: anything but PAD and EOS.
std::vector<int32_t> RandomPrefix(const ModelOptions& o, size_t length, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(o.vocab) - 1);
  std::vector<int32_t> p;
  while (p.size() < length) {
    const int32_t v = id(rng);
    if (v != o.pad && v != o.eos) p.push_back(v);
  }
  return p;
}

std::vector<SearchOptions> Searches() {
  std::vector<SearchOptions> out;
  for (int beam : {1, 3, 4}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam == 4 ? 2 : beam;
    so.length_penalty = beam == 3 ? 0.6f : 1.0f;
    out.push_back(so);
  }
  return out;
}

void ExpectReference(const Translator& t, size_t sentence, const testing::ReferenceModel& ref,
                     const std::vector<int32_t>& src, const std::vector<int32_t>& prefix,
                     const SearchOptions& so, const std::vector<int32_t>* allowed = nullptr) {
  const auto want = testing::ReferenceSearch(ref, src, so, kMaxTarget, allowed, &prefix);
  const size_t n = std::min<size_t>(want.size(), static_cast<size_t>(so.num_hypotheses));
  ASSERT_EQ(t.num_hypotheses(sentence), n);
  for (size_t k = 0; k < n; ++k) {
    const HypothesisView h = t.hypothesis(sentence, k);
    const std::vector<int32_t> ids(h.ids, h.ids + h.size);
    EXPECT_EQ(ids, want[k].ids) << "hypothesis " << k;
    EXPECT_NEAR(h.score, want[k].score, 1e-4) << "hypothesis " << k;
    EXPECT_EQ(h.finished, want[k].finished) << "hypothesis " << k;
    ASSERT_GE(ids.size(), prefix.size()) << "hypothesis " << k;
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), ids.begin())) << "hypothesis " << k;
  }
}

TEST(TargetPrefix, GreedyAndBeamMatchTheReferenceForcedThroughThePrefix) {
  const ModelOptions o = SearchModelOptions();
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  const testing::ReferenceModel ref(tm->spec);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  for (const SearchOptions& so : Searches()) {
    for (size_t length : {size_t{0}, size_t{1}, size_t{3}, size_t{6}}) {
      SCOPED_TRACE("beam " + std::to_string(so.beam_size) + " prefix " + std::to_string(length));
      const std::vector<int32_t> src = testing::RandomSource(o, 3 + length, 50 + length);
      const std::vector<int32_t> prefix = RandomPrefix(o, length, 60 + length);
      const TokenSpan s{src.data(), src.size()}, p{prefix.data(), prefix.size()};
      ASSERT_TRUE(t->TranslateIds(&s, 1, so, &p).ok());
      ExpectReference(*t, 0, ref, src, prefix, so);
    }
  }
}

// The union of a shortlist model holds the prefix's ids even where no source piece lists them.
TEST(TargetPrefix, PrefixIdsJoinTheShortlistUnion) {
  const ModelOptions o = SearchModelOptions();
  const auto m = testing::LoadShortlistModel(o);
  ASSERT_NE(m, nullptr);
  const testing::ReferenceModel ref(m->spec);
  auto t = MakeTranslator(m->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->uses_shortlist());
  const std::vector<int32_t> src = testing::RandomSource(o, 4, 81);
  auto pieces = m->model->ShortlistPieces({src});
  ASSERT_TRUE(pieces.ok());
  // A prefix of ids outside the source's union.
  std::vector<int32_t> prefix;
  for (int32_t v = 0; v < static_cast<int32_t>(o.vocab) && prefix.size() < 3; ++v) {
    if (v != o.pad && v != o.eos && !std::binary_search(pieces->begin(), pieces->end(), v)) {
      prefix.push_back(v);
    }
  }
  ASSERT_EQ(prefix.size(), 3u);
  std::vector<int32_t> allowed = *pieces;
  allowed.insert(allowed.end(), prefix.begin(), prefix.end());
  std::sort(allowed.begin(), allowed.end());
  for (const SearchOptions& so : Searches()) {
    SCOPED_TRACE("beam " + std::to_string(so.beam_size));
    const TokenSpan s{src.data(), src.size()}, p{prefix.data(), prefix.size()};
    ASSERT_TRUE(t->TranslateIds(&s, 1, so, &p).ok());
    ExpectReference(*t, 0, ref, src, prefix, so, &allowed);
  }
}

// Forcing the ids greedy search picks anyway is no change at all: the same ids, score and flag.
TEST(TargetPrefix, TheModelsOwnGreedyStartChangesNothing) {
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kI8}) {
    const ModelOptions o = SearchModelOptions(f);
    auto tm = testing::BuildModel(o);
    ASSERT_NE(tm->model, nullptr);
    auto t = MakeTranslator(tm->model, SearchLimits());
    ASSERT_NE(t, nullptr);
    const SearchOptions greedy;
    for (uint32_t seed = 0; seed < 4; ++seed) {
      const std::vector<int32_t> src = testing::RandomSource(o, 2 + seed * 3, 90 + seed);
      const TokenSpan s{src.data(), src.size()};
      ASSERT_TRUE(t->TranslateIds(&s, 1, greedy).ok());
      const std::vector<Hyp> plain = Results(*t, 0);
      ASSERT_EQ(plain.size(), 1u);
      for (size_t k = 0; k <= plain[0].ids.size(); ++k) {
        SCOPED_TRACE(std::string(WeightFormatName(f)) + " seed " + std::to_string(seed) +
                     " prefix " + std::to_string(k));
        const TokenSpan p{plain[0].ids.data(), k};
        ASSERT_TRUE(t->TranslateIds(&s, 1, greedy, &p).ok());
        ExpectSame(Results(*t, 0), plain);
      }
    }
  }
}

// Lines with prefixes of different lengths (none among them) in one batch, on one thread and
// on batch lanes, and through TranslateIdsEach's sorted batches: each line as it comes alone.
TEST(TargetPrefix, BatchesAndLanesGiveEachLineItsOwnResult) {
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
  std::vector<std::vector<int32_t>> sources, prefixes;
  for (uint32_t i = 0; i < 4; ++i) {
    sources.push_back(testing::RandomSource(o, 2 + 3 * i, 100 + i));
    prefixes.push_back(RandomPrefix(o, (i * 2) % 5, 110 + i));  // 0, 2, 4, 1 ids
  }
  std::vector<TokenSpan> s, p;
  for (size_t i = 0; i < sources.size(); ++i) {
    s.push_back({sources[i].data(), sources[i].size()});
    p.push_back({prefixes[i].data(), prefixes[i].size()});
  }
  for (const SearchOptions& so : Searches()) {
    SCOPED_TRACE("beam " + std::to_string(so.beam_size));
    std::vector<std::vector<Hyp>> alone;
    for (size_t i = 0; i < s.size(); ++i) {
      ASSERT_TRUE(single->TranslateIds(&s[i], 1, so, &p[i]).ok());
      alone.push_back(Results(*single, 0));
    }
    ASSERT_TRUE(batched->TranslateIds(s.data(), s.size(), so, p.data()).ok());
    ASSERT_TRUE(laned->TranslateIds(s.data(), s.size(), so, p.data()).ok());
    BatchOptions sorted;
    sorted.max_lines = 3;
    ASSERT_TRUE(single->TranslateIdsEach(s.data(), s.size(), so, sorted, p.data()).ok());
    for (size_t i = 0; i < s.size(); ++i) {
      SCOPED_TRACE("line " + std::to_string(i));
      ExpectSame(Results(*batched, i), alone[i]);
      ExpectSame(Results(*laned, i), alone[i]);
      ExpectSame(Results(*single, i), alone[i]);
    }
  }
}

TEST(TargetPrefix, APrefixAsLongAsTheMaximumLengthIsReturnedUnfinished) {
  const ModelOptions o = SearchModelOptions();
  auto tm = testing::BuildModel(o);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  const std::vector<int32_t> src = testing::RandomSource(o, 5, 120);
  const TokenSpan s{src.data(), src.size()};
  for (int max_length : {0, 4}) {
    const size_t length = max_length > 0 ? static_cast<size_t>(max_length) : kMaxTarget;
    const std::vector<int32_t> prefix = RandomPrefix(o, length, 121);
    const TokenSpan p{prefix.data(), prefix.size()};
    for (int beam : {1, 3}) {
      SearchOptions so;
      so.beam_size = beam;
      so.max_length = max_length;
      ASSERT_TRUE(t->TranslateIds(&s, 1, so, &p).ok());
      const std::vector<Hyp> got = Results(*t, 0);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].ids, prefix);
      EXPECT_FALSE(got[0].finished);
    }
  }
}

TEST(TargetPrefix, BadPrefixesAreRefusedBeforeAnythingRuns) {
  const ModelOptions o = SearchModelOptions();
  auto tm = testing::BuildModel(o);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  const std::vector<int32_t> src = testing::RandomSource(o, 5, 130);
  const TokenSpan s[2] = {{src.data(), src.size()}, {src.data(), src.size()}};
  const SearchOptions greedy;
  ASSERT_TRUE(t->TranslateIds(s, 2, greedy).ok());
  const std::vector<Hyp> before = Results(*t, 1);
  struct Case {
    std::vector<int32_t> prefix;
    ErrorCode code;
    std::string message;
  };
  const std::vector<int32_t> too_long = RandomPrefix(o, kMaxTarget + 1, 131);
  const std::vector<Case> cases = {
      {{3, o.eos}, ErrorCode::kInvalidArgument,
       "sentence 1: target prefix position 1: id " + std::to_string(o.eos) +
           " is EOS (a prefix cannot end the translation)"},
      {{o.pad}, ErrorCode::kInvalidArgument,
       "sentence 1: target prefix position 0: id " + std::to_string(o.pad) +
           " is PAD (never produced)"},
      {{3, 4, static_cast<int32_t>(o.vocab)}, ErrorCode::kInvalidArgument,
       "sentence 1: target prefix position 2: id " + std::to_string(o.vocab) +
           " is outside the vocabulary of " + std::to_string(o.vocab)},
      {{-1}, ErrorCode::kInvalidArgument,
       "sentence 1: target prefix position 0: id -1 is outside the vocabulary of " +
           std::to_string(o.vocab)},
      {too_long, ErrorCode::kInputTooLong,
       "sentence 1: target prefix of 13 tokens exceeds the maximum length 12 "
       "(SearchOptions.max_length, else TranslatorLimits.max_target_tokens)"},
  };
  for (const Case& c : cases) {
    const TokenSpan p[2] = {{}, {c.prefix.data(), c.prefix.size()}};
    const Status st = t->TranslateIds(s, 2, greedy, p);
    EXPECT_EQ(st.code(), c.code) << st.ToString();
    EXPECT_EQ(st.message(), c.message);
    ExpectSame(Results(*t, 1), before);  // the previous results stand
  }
  const TokenSpan null_ids[2] = {{}, {nullptr, 2}};
  EXPECT_EQ(t->TranslateIds(s, 2, greedy, null_ids).message(),
            "sentence 1: target prefix ids is null");
  // The maximum length of the call counts, not only the limit.
  SearchOptions short_search;
  short_search.max_length = 2;
  const std::vector<int32_t> three = RandomPrefix(o, 3, 132);
  const TokenSpan p3[2] = {{}, {three.data(), three.size()}};
  EXPECT_EQ(t->TranslateIds(s, 2, short_search, p3).code(), ErrorCode::kInputTooLong);
}

// TranslateIdsEach: a line with a bad prefix fails alone, the others translate as they would.
TEST(TargetPrefix, EachLineFailsAloneOnItsPrefix) {
  const ModelOptions o = SearchModelOptions(WeightFormat::kI8);
  auto tm = testing::BuildModel(o);
  auto t = MakeTranslator(tm->model, SearchLimits());
  ASSERT_NE(t, nullptr);
  std::vector<std::vector<int32_t>> sources;
  for (uint32_t i = 0; i < 4; ++i) sources.push_back(testing::RandomSource(o, 3 + i, 140 + i));
  const std::vector<int32_t> good = RandomPrefix(o, 2, 150), with_eos = {3, o.eos};
  const std::vector<int32_t> too_long = RandomPrefix(o, kMaxTarget + 2, 151);
  const std::vector<const std::vector<int32_t>*> prefixes = {&good, &with_eos, nullptr, &too_long};
  std::vector<TokenSpan> s, p;
  for (size_t i = 0; i < 4; ++i) {
    s.push_back({sources[i].data(), sources[i].size()});
    p.push_back(prefixes[i] ? TokenSpan{prefixes[i]->data(), prefixes[i]->size()} : TokenSpan{});
  }
  const SearchOptions greedy;
  ASSERT_TRUE(t->TranslateIdsEach(s.data(), s.size(), greedy, {}, p.data()).ok());
  EXPECT_TRUE(t->line_status(0).ok());
  EXPECT_EQ(t->line_code(1), ErrorCode::kInvalidArgument);
  EXPECT_EQ(t->line_status(1).message(), "target prefix position 1: id " +
                                             std::to_string(o.eos) +
                                             " is EOS (a prefix cannot end the translation)");
  EXPECT_TRUE(t->line_status(2).ok());
  EXPECT_EQ(t->line_code(3), ErrorCode::kInputTooLong);
  EXPECT_EQ(t->line_status(3).code(), ErrorCode::kInputTooLong);
  EXPECT_EQ(t->num_hypotheses(1), 0u);
  EXPECT_EQ(t->num_hypotheses(3), 0u);
  const std::vector<Hyp> first = Results(*t, 0), third = Results(*t, 2);
  ASSERT_TRUE(t->TranslateIds(&s[0], 1, greedy, &p[0]).ok());
  ExpectSame(first, Results(*t, 0));
  ASSERT_TRUE(t->TranslateIds(&s[2], 1, greedy).ok());
  ExpectSame(third, Results(*t, 0));
}

}  // namespace
}  // namespace headwise
