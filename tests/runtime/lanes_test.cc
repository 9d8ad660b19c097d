// Batch lanes (runtime/src/lanes.h, TranslatorLimits::batch_lanes): a call of several sentences
// run as whole sub-batches, one per thread of the pool. The results must be the same bits as on
// one thread (every sentence on its own rows and, with a shortlist, its own list), in the
// caller's order, for greedy, beam n-best and TranslateIdsEach; the lane count is resolved and
// refused as documented; the lanes' memory is part of the plan and of max_memory_bytes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

struct Fixture {
  testing::ModelOptions o;
  std::unique_ptr<testing::TestModel> model;
  std::vector<std::vector<int32_t>> sources;
  std::vector<TokenSpan> spans;
};

// A model large enough that its products and attention cross the pool's split thresholds, with
// pruned and empty attention blocks, optionally a vocabulary shortlist; seven sources of mixed
// lengths.
Fixture Make(WeightFormat format, bool shortlist) {
  Fixture f;
  f.o.d_model = 64;
  f.o.encoder_ffn = f.o.decoder_ffn = 256;
  f.o.vocab = 301;
  f.o.pad = f.o.start = 300;
  f.o.eos_bias = 1.0f;
  f.o.kept = {{0, 1, 2}, {}, {1, 3}, {0, 1, 2, 3}, {2}, {0, 3}};
  f.o.weights = format;
  ModelSpec spec = testing::MakeSpec(f.o);
  if (shortlist) spec.shortlist = testing::MakeSyntheticShortlist(f.o.vocab, 6, 8, 5);
  auto loaded = testing::LoadSpec(std::move(spec));
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (loaded.ok()) f.model = std::move(loaded).value();
  for (uint32_t s = 0; s < 7; ++s) {
    f.sources.push_back(testing::RandomSource(f.o, s % 2 == 0 ? 4 + 5 * s : 30 - 3 * s, 40 + s));
  }
  for (const auto& s : f.sources) f.spans.push_back({s.data(), s.size()});
  return f;
}

TranslatorLimits Limits(int threads, int lanes) {
  TranslatorLimits l;
  l.max_batch = 5;
  l.max_source_tokens = 40;
  l.max_target_tokens = 24;
  l.max_beam = 4;
  l.num_threads = threads;
  l.batch_lanes = lanes;
  l.sort_window = 8;
  return l;
}

std::unique_ptr<Translator> Create(const Fixture& f, const TranslatorLimits& l) {
  auto t = Translator::Create(f.model->model, l);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

bool ReadsWeightsInPlace(const Translator& t) {
  return t.kernel_paths().find("xnnpack") == std::string::npos;
}

using Hyps = std::vector<std::vector<std::pair<std::vector<int32_t>, float>>>;

Hyps Results(const Translator& t, size_t n) {
  Hyps out(n);
  for (size_t s = 0; s < n; ++s) {
    for (size_t k = 0; k < t.num_hypotheses(s); ++k) {
      const HypothesisView h = t.hypothesis(s, k);
      out[s].push_back({std::vector<int32_t>(h.ids, h.ids + h.size), h.score});
    }
  }
  return out;
}

class LanesTest : public ::testing::TestWithParam<std::tuple<WeightFormat, bool>> {};

TEST_P(LanesTest, SameBitsAsOneThreadInTheCallersOrder) {
  const auto [format, shortlist] = GetParam();
  const Fixture f = Make(format, shortlist);
  ASSERT_NE(f.model, nullptr);
  const std::unique_ptr<Translator> one = Create(f, Limits(1, 0));
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->limits().batch_lanes, 1);
  ASSERT_EQ(one->uses_shortlist(), shortlist);
  // Two and three lanes (three threads: lanes of 2, 2 and 1 sentences for a batch of five).
  for (int threads : {2, 3}) {
    const std::unique_ptr<Translator> lanes = Create(f, Limits(threads, 0));
    ASSERT_NE(lanes, nullptr);
    if (!ReadsWeightsInPlace(*lanes)) {
      EXPECT_EQ(lanes->limits().batch_lanes, 1) << lanes->kernel_paths();
      continue;  // XNNPACK holds weight copies here (Arm fp32): no lanes, nothing to compare
    }
    ASSERT_EQ(lanes->limits().batch_lanes, threads);
    SearchOptions greedy;
    SearchOptions beam;
    beam.beam_size = 4;
    beam.num_hypotheses = 3;
    beam.length_penalty = 0.8f;
    for (const SearchOptions& so : {greedy, beam}) {
      for (size_t batch : {size_t{2}, size_t{5}, size_t{1}}) {
        for (size_t first : {size_t{0}, size_t{2}}) {
          ASSERT_TRUE(one->TranslateIds(f.spans.data() + first, batch, so).ok());
          ASSERT_TRUE(lanes->TranslateIds(f.spans.data() + first, batch, so).ok());
          const Hyps want = Results(*one, batch);
          EXPECT_EQ(Results(*lanes, batch), want)
              << threads << " threads, beam " << so.beam_size << ", batch " << batch;
          size_t stored = 0;
          for (const auto& h : want) stored += h.size();
          EXPECT_GE(stored, batch);
        }
      }
      BatchOptions batching;
      ASSERT_TRUE(one->TranslateIdsEach(f.spans.data(), f.spans.size(), so, batching).ok());
      ASSERT_TRUE(lanes->TranslateIdsEach(f.spans.data(), f.spans.size(), so, batching).ok());
      EXPECT_EQ(Results(*lanes, f.spans.size()), Results(*one, f.spans.size()))
          << threads << " threads, TranslateIdsEach, beam " << so.beam_size;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, LanesTest,
    ::testing::Combine(::testing::Values(WeightFormat::kF32, WeightFormat::kI8, WeightFormat::kF16),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<WeightFormat, bool>>& p) {
      return std::string(WeightFormatName(std::get<0>(p.param))) +
             (std::get<1>(p.param) ? "_shortlist" : "_full");
    });

TEST(LanesLimitsTest, ResolvedAndRefusedAsDocumented) {
  const Fixture f = Make(WeightFormat::kI8, false);  // int8 reads its weights in place everywhere
  ASSERT_NE(f.model, nullptr);
  for (auto [threads, max_batch, want] :
       {std::tuple<int, int, int>{1, 5, 1}, {2, 5, 2}, {4, 3, 3}, {2, 1, 1}}) {
    TranslatorLimits l = Limits(threads, 0);
    l.max_batch = max_batch;
    const std::unique_ptr<Translator> t = Create(f, l);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->limits().batch_lanes, want) << threads << " threads, max_batch " << max_batch;
  }
  TranslatorLimits off = Limits(2, 1);
  const std::unique_ptr<Translator> t = Create(f, off);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->limits().batch_lanes, 1);

  for (auto [threads, lanes, what] : {std::tuple<int, int, const char*>{2, -1, ">= 0"},
                                      {2, 3, "exceeds num_threads"},
                                      {8, 6, "max_batch (5)"}}) {
    auto bad = Translator::Create(f.model->model, Limits(threads, lanes));
    ASSERT_FALSE(bad.ok()) << lanes << " lanes";
    EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find("batch_lanes"), std::string::npos) << bad.status().ToString();
    EXPECT_NE(bad.status().message().find(what), std::string::npos) << bad.status().ToString();
  }
}

// Where an operator packs a copy of its weights (XNNPACK: fp32 on Arm), more than one lane is
// refused with the reason, and automatic picks 1. On x86 with AVX2 fp32 reads in place: there the
// explicit value is granted.
TEST(LanesLimitsTest, RefusedWhereOperatorsHoldWeightCopies) {
  const Fixture f = Make(WeightFormat::kF32, false);
  ASSERT_NE(f.model, nullptr);
  const std::unique_ptr<Translator> probe = Create(f, Limits(2, 1));
  ASSERT_NE(probe, nullptr);
  auto asked = Translator::Create(f.model->model, Limits(2, 2));
  if (ReadsWeightsInPlace(*probe)) {
    ASSERT_TRUE(asked.ok()) << asked.status().ToString();
    EXPECT_EQ((*asked)->limits().batch_lanes, 2);
    return;
  }
  ASSERT_FALSE(asked.ok());
  EXPECT_EQ(asked.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(asked.status().message().find("packed copies"), std::string::npos)
      << asked.status().ToString();
  const std::unique_ptr<Translator> automatic = Create(f, Limits(2, 0));
  ASSERT_NE(automatic, nullptr);
  EXPECT_EQ(automatic->limits().batch_lanes, 1);
}

// The lanes' arenas are planned memory: counted in arena_bytes and against max_memory_bytes.
TEST(LanesLimitsTest, LaneMemoryIsPlannedAndCapped) {
  const Fixture f = Make(WeightFormat::kI8, true);
  ASSERT_NE(f.model, nullptr);
  const std::unique_ptr<Translator> without = Create(f, Limits(2, 1));
  const std::unique_ptr<Translator> with = Create(f, Limits(2, 2));
  ASSERT_NE(without, nullptr);
  ASSERT_NE(with, nullptr);
  EXPECT_GT(with->arena_bytes(), without->arena_bytes());
  // Two lanes of ceil(5 / 2) = 3 sentences each: more than the main plan's per-sentence share,
  // less than two more copies of it.
  EXPECT_LT(with->arena_bytes(), 3 * without->arena_bytes());
  TranslatorLimits capped = Limits(2, 2);
  capped.max_memory_bytes = without->arena_bytes();
  auto refused = Translator::Create(f.model->model, capped);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(refused.status().message().find("batch lanes"), std::string::npos)
      << refused.status().ToString();
  capped.max_memory_bytes = with->arena_bytes();
  EXPECT_TRUE(Translator::Create(f.model->model, capped).ok());
}

}  // namespace
}  // namespace headwise
