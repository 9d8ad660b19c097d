// Length-sorted batching (runtime/src/batching.h, Translator::TranslateIdsEach): the plan
// (sort by length with index ties, cut by lines and by lines x longest source) against a
// brute-force statement of the rules, and TranslateIdsEach on a shuffled mix of short and long
// sources with failing ones among them: every line's hypotheses equal what a batch-1
// translator gives it, in input order, for greedy and beam (n-best), with and without sorting
// and a token budget; the observer sees every translated line once.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "batching.h"
#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

using testing::ModelOptions;

// ---- the plan ---------------------------------------------------------------------------

TEST(BatchPlanTest, SortIsByLengthThenIndex) {
  const std::vector<size_t> length = {5, 2, 9, 2, 5, 1, 9, 2};
  std::vector<size_t> order = {7, 6, 5, 4, 3, 2, 1, 0};
  SortByLength(length.data(), order.data(), order.size());
  EXPECT_EQ(order, (std::vector<size_t>{5, 1, 3, 7, 0, 4, 2, 6}));
}

// Every cut NextBatchSize makes, checked against the rules over many random inputs: at least
// one line, at most max_lines, within the budget unless alone, and maximal (one more line would
// break a rule).
TEST(BatchPlanTest, CutsAreMaximalUnderBothLimits) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 1 + rng() % 40;
    std::vector<size_t> length(n);
    for (size_t& l : length) l = 1 + rng() % 30;
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    if (trial % 2 == 0) SortByLength(length.data(), order.data(), n);  // also unsorted orders
    const size_t max_lines = 1 + rng() % 9;
    const size_t max_tokens = trial % 3 == 0 ? 0 : 1 + rng() % 120;
    size_t covered = 0;
    for (size_t start = 0; start < n;) {
      const size_t k = NextBatchSize(length.data(), order.data(), start, n, max_lines, max_tokens);
      ASSERT_GE(k, 1u);
      ASSERT_LE(k, max_lines);
      ASSERT_LE(start + k, n);
      auto cost = [&](size_t lines) {
        size_t longest = 0;
        for (size_t j = 0; j < lines; ++j) longest = std::max(longest, length[order[start + j]]);
        return lines * longest;
      };
      if (k > 1 && max_tokens > 0) {
        EXPECT_LE(cost(k), max_tokens);
      }
      if (start + k < n && k < max_lines) {
        EXPECT_TRUE(max_tokens > 0 && cost(k + 1) > max_tokens) << "batch could have taken one more";
      }
      covered += k;
      start += k;
    }
    EXPECT_EQ(covered, n);
  }
}

TEST(BatchPlanTest, OptionsAndWindowAreChecked) {
  TranslatorLimits limits;
  limits.max_batch = 4;
  BatchOptions b;
  EXPECT_TRUE(ValidateBatchOptions(b, limits).ok());
  b.max_lines = 5;
  EXPECT_EQ(ValidateBatchOptions(b, limits).code(), ErrorCode::kInvalidArgument);
  b.max_lines = -1;
  EXPECT_EQ(ValidateBatchOptions(b, limits).code(), ErrorCode::kInvalidArgument);
  b.max_lines = 4;
  b.max_tokens = -3;
  EXPECT_EQ(ValidateBatchOptions(b, limits).code(), ErrorCode::kInvalidArgument);

  auto w = ResolveSortWindow(limits);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, 64);  // 16 x max_batch
  limits.sort_window = 3;
  EXPECT_EQ(*ResolveSortWindow(limits), 3);
  limits.sort_window = -1;
  EXPECT_EQ(ResolveSortWindow(limits).status().code(), ErrorCode::kInvalidArgument);
}

// ---- TranslateIdsEach -------------------------------------------------------------------

class RecordingObserver final : public BatchObserver {
 public:
  struct Batch {
    std::vector<size_t> lines;
    size_t longest = 0;
    bool ok = true;
  };
  void OnBatch(const BatchReport& b) override {
    Batch r;
    r.lines.assign(b.lines, b.lines + b.num_lines);
    r.longest = b.longest_source;
    r.ok = b.status != nullptr && b.status->ok();
    EXPECT_GE(b.milliseconds, 0.0);
    batches.push_back(std::move(r));
  }
  std::vector<Batch> batches;
};

class TranslateIdsEachTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.eos_bias = 0.7f;
    options_.kept = {{0, 3}, {1}, {}, {0, 2}, {1, 2, 3}, {3}};  // pruned and empty blocks
    model_ = testing::BuildModel(options_);
    ASSERT_NE(model_, nullptr);
  }

  std::unique_ptr<Translator> Make(int max_batch, int sort_window) const {
    TranslatorLimits limits;
    limits.max_batch = max_batch;
    limits.max_source_tokens = 24;
    limits.max_target_tokens = 12;
    limits.max_beam = 3;
    limits.sort_window = sort_window;
    auto t = Translator::Create(model_->model, limits);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }

  // Short and long sources shuffled together, with three that must fail on their own.
  std::vector<std::vector<int32_t>> Mix() const {
    std::vector<std::vector<int32_t>> sources;
    for (uint32_t s = 0; s < 14; ++s) {
      const size_t length = s % 3 == 0 ? 16 + s % 5 : 1 + s % 4;  // long and short
      sources.push_back(testing::RandomSource(options_, length, 100 + s));
    }
    std::mt19937 rng(11);
    std::shuffle(sources.begin(), sources.end(), rng);
    sources.insert(sources.begin() + 3, std::vector<int32_t>{});               // empty
    sources.insert(sources.begin() + 8, testing::RandomSource(options_, 30, 9));  // too long
    std::vector<int32_t> bad = testing::RandomSource(options_, 4, 5);
    bad[1] = static_cast<int32_t>(options_.vocab);  // outside the vocabulary
    sources.insert(sources.begin() + 12, bad);
    return sources;
  }

  ModelOptions options_;
  std::unique_ptr<testing::TestModel> model_;
};

// What a batch-1 translator gives each source alone.
struct Alone {
  Status status;
  std::vector<std::vector<int32_t>> ids;
  std::vector<float> scores;
  std::vector<bool> finished;
};

std::vector<Alone> TranslateAlone(Translator& one, const std::vector<std::vector<int32_t>>& sources,
                                  const SearchOptions& so) {
  std::vector<Alone> out(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const TokenSpan span{sources[i].data(), sources[i].size()};
    out[i].status = one.TranslateIds(&span, 1, so);
    if (!out[i].status.ok()) continue;
    for (size_t k = 0; k < one.num_hypotheses(0); ++k) {
      const HypothesisView h = one.hypothesis(0, k);
      out[i].ids.emplace_back(h.ids, h.ids + h.size);
      out[i].scores.push_back(h.score);
      out[i].finished.push_back(h.finished);
    }
  }
  return out;
}

TEST_F(TranslateIdsEachTest, SameAsBatchOneInInputOrder) {
  const auto sources = Mix();
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  auto one = Make(1, 1);
  ASSERT_NE(one, nullptr);

  struct Case {
    int beam, nbest, max_lines, max_tokens, window;
    bool sort;
  };
  const Case cases[] = {{1, 1, 0, 0, 32, true},   {3, 3, 0, 0, 32, true},  {3, 2, 3, 40, 32, true},
                        {1, 1, 4, 20, 32, true},  {3, 1, 0, 0, 32, false}, {2, 2, 2, 0, 17, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE("beam " + std::to_string(c.beam) + " nbest " + std::to_string(c.nbest) +
                 " lines " + std::to_string(c.max_lines) + " tokens " +
                 std::to_string(c.max_tokens) + (c.sort ? " sorted" : " input order"));
    auto tr = Make(5, c.window);
    ASSERT_NE(tr, nullptr);
    SearchOptions so;
    so.beam_size = c.beam;
    so.num_hypotheses = c.nbest;
    so.length_penalty = 0.9f;
    const std::vector<Alone> want = TranslateAlone(*one, sources, so);
    BatchOptions b;
    b.max_lines = c.max_lines;
    b.max_tokens = c.max_tokens;
    b.sort_by_length = c.sort;
    RecordingObserver seen;
    b.observer = &seen;
    const Status s = tr->TranslateIdsEach(spans.data(), spans.size(), so, b);
    ASSERT_TRUE(s.ok()) << s.ToString();

    size_t distinct = 0;
    for (size_t i = 0; i < sources.size(); ++i) {
      const Status& got = tr->line_status(i);
      ASSERT_EQ(got.code(), want[i].status.code()) << "line " << i << ": " << got.ToString();
      if (!got.ok()) {
        EXPECT_EQ(tr->num_hypotheses(i), 0u);
        continue;
      }
      ASSERT_EQ(tr->num_hypotheses(i), want[i].ids.size()) << "line " << i;
      for (size_t k = 0; k < want[i].ids.size(); ++k) {
        const HypothesisView h = tr->hypothesis(i, k);
        EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.size), want[i].ids[k]) << "line " << i << " k " << k;
        EXPECT_NEAR(h.score, want[i].scores[k], 1e-5) << "line " << i;
        EXPECT_EQ(h.finished, want[i].finished[k]) << "line " << i;
      }
      distinct += want[i].ids[0] != want[0].ids[0];
    }
    EXPECT_GT(distinct, 0u) << "the lines translate alike: a mix-up could go unnoticed";

    // The observer saw each translated line exactly once, in batches that keep the rules.
    std::vector<int> times(sources.size(), 0);
    const size_t max_lines = c.max_lines > 0 ? static_cast<size_t>(c.max_lines) : 5;
    for (const auto& batch : seen.batches) {
      EXPECT_TRUE(batch.ok);
      ASSERT_FALSE(batch.lines.empty());
      EXPECT_LE(batch.lines.size(), max_lines);
      size_t longest = 0;
      for (size_t j = 0; j < batch.lines.size(); ++j) {
        const size_t line = batch.lines[j];
        ++times[line];
        longest = std::max(longest, sources[line].size());
        if (c.sort && j > 0) {
          EXPECT_LE(sources[batch.lines[j - 1]].size(), sources[line].size());
        }
      }
      EXPECT_EQ(batch.longest, longest);
      if (c.max_tokens > 0 && batch.lines.size() > 1) {
        EXPECT_LE(batch.lines.size() * longest, static_cast<size_t>(c.max_tokens));
      }
    }
    for (size_t i = 0; i < sources.size(); ++i) EXPECT_EQ(times[i], want[i].status.ok() ? 1 : 0) << i;
    if (c.sort) {
      // Sorted batches keep short and long lines apart: consecutive batches never go shorter.
      for (size_t b2 = 1; b2 < seen.batches.size(); ++b2) {
        EXPECT_LE(sources[seen.batches[b2 - 1].lines.back()].size(),
                  sources[seen.batches[b2].lines.front()].size());
      }
    }
  }
}

TEST_F(TranslateIdsEachTest, FailingLinesSayWhyWithoutNamingThemselves) {
  const auto sources = Mix();
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  auto tr = Make(4, 32);
  ASSERT_NE(tr, nullptr);
  ASSERT_TRUE(tr->TranslateIdsEach(spans.data(), spans.size(), SearchOptions{}).ok());
  EXPECT_EQ(tr->line_status(3).code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(tr->line_status(3).message().find("empty"), std::string::npos);
  EXPECT_EQ(tr->line_status(8).code(), ErrorCode::kInputTooLong);
  EXPECT_EQ(tr->line_status(8).message(), "30 tokens exceed TranslatorLimits.max_source_tokens 24");
  EXPECT_EQ(tr->line_status(12).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tr->line_status(12).message(),
            "position 1: id " + std::to_string(options_.vocab) + " is outside the vocabulary of " +
                std::to_string(options_.vocab));
  EXPECT_TRUE(tr->line_status(0).ok());
  EXPECT_TRUE(tr->line_status(1000).ok());  // out of range

  // Any other call replaces the results: TranslateIds answers for its own batch.
  ASSERT_TRUE(tr->TranslateIds(&spans[0], 1, SearchOptions{}).ok());
  EXPECT_TRUE(tr->line_status(8).ok());
  EXPECT_EQ(tr->num_hypotheses(1), 0u);
  EXPECT_EQ(tr->num_hypotheses(0), 1u);
}

TEST_F(TranslateIdsEachTest, WholeCallErrors) {
  auto tr = Make(4, 6);
  ASSERT_NE(tr, nullptr);
  EXPECT_EQ(tr->limits().sort_window, 6);
  const std::vector<int32_t> src = testing::RandomSource(options_, 3, 1);
  std::vector<TokenSpan> spans(7, TokenSpan{src.data(), src.size()});
  EXPECT_EQ(tr->TranslateIdsEach(spans.data(), 7, SearchOptions{}).code(), ErrorCode::kBatchTooLarge);
  EXPECT_TRUE(tr->TranslateIdsEach(spans.data(), 6, SearchOptions{}).ok());
  EXPECT_EQ(tr->TranslateIdsEach(nullptr, 2, SearchOptions{}).code(), ErrorCode::kInvalidArgument);
  SearchOptions too_wide;
  too_wide.beam_size = 4;  // max_beam 3
  EXPECT_EQ(tr->TranslateIdsEach(spans.data(), 2, too_wide).code(), ErrorCode::kInvalidArgument);
  BatchOptions b;
  b.max_lines = 5;  // max_batch 4
  EXPECT_EQ(tr->TranslateIdsEach(spans.data(), 2, SearchOptions{}, b).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(tr->num_hypotheses(5), 1u);  // a rejected call changes nothing (as TranslateIds)
  EXPECT_TRUE(tr->TranslateIdsEach(spans.data(), 0, SearchOptions{}).ok());

  auto defaulted = Make(4, 0);
  ASSERT_NE(defaulted, nullptr);
  EXPECT_EQ(defaulted->limits().sort_window, 64);
  // The window's results are part of the planned arena.
  EXPECT_GT(defaulted->arena_bytes(), tr->arena_bytes());
}

}  // namespace
}  // namespace headwise
