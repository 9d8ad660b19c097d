// Search behaviour the reference comparison does not isolate: PAD is never produced, the
// maximum length cuts unfinished hypotheses, and threads (a pool, or translators on several
// threads sharing one model) do not change results.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <utility>

#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

using testing::ModelOptions;

TEST(SearchTest, PadIsNeverProducedEvenWhenItHasTheBestLogit) {
  ModelOptions o;
  auto spec = testing::MakeSpec(o);
  for (auto& t : spec.tensors) {
    if (t.name == "final_logits_bias") t.data[static_cast<size_t>(o.pad)] = 100.0f;
  }
  testing::AlignedBytes image(testing::Serialize(spec));
  auto model = Model::LoadFromMemory(image.data(), image.size());
  ASSERT_TRUE(model.ok());
  TranslatorLimits limits;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 8;
  auto tr = Translator::Create(*model, limits);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  const std::vector<int32_t> src = testing::RandomSource(o, 5, 70);
  const TokenSpan span{src.data(), src.size()};
  std::vector<float> logits(o.vocab);
  ASSERT_TRUE((*tr)->ForcedLogits(span, {}, logits.data()).ok());
  EXPECT_EQ(std::max_element(logits.begin(), logits.end()) - logits.begin(), o.pad) << "unmasked";
  for (int beam : {1, 3}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam;
    ASSERT_TRUE((*tr)->TranslateIds(&span, 1, so).ok());
    for (size_t k = 0; k < (*tr)->num_hypotheses(0); ++k) {
      const HypothesisView h = (*tr)->hypothesis(0, k);
      for (size_t i = 0; i < h.size; ++i) EXPECT_NE(h.ids[i], o.pad);
    }
  }
}

TEST(SearchTest, MaxLengthCutsUnfinishedHypotheses) {
  ModelOptions o;
  o.eos_bias = -50.0f;  // never ends on its own
  auto tm = testing::BuildModel(o);
  TranslatorLimits limits;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 9;
  auto tr = Translator::Create(tm->model, limits);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  const std::vector<int32_t> src = testing::RandomSource(o, 4, 71);
  const TokenSpan span{src.data(), src.size()};
  for (int max_length : {0, 1, 5}) {
    for (int beam : {1, 2}) {
      SearchOptions so;
      so.beam_size = beam;
      so.num_hypotheses = beam;
      so.max_length = max_length;
      ASSERT_TRUE((*tr)->TranslateIds(&span, 1, so).ok());
      ASSERT_EQ((*tr)->num_hypotheses(0), static_cast<size_t>(beam));
      for (size_t k = 0; k < (*tr)->num_hypotheses(0); ++k) {
        EXPECT_FALSE((*tr)->hypothesis(0, k).finished);
        EXPECT_EQ((*tr)->hypothesis(0, k).size, static_cast<size_t>(max_length > 0 ? max_length : 9));
      }
    }
  }
}

// Two threads (matrix products and attention heads on the pool) give the single-threaded
// results, with yielding and with spinning workers: the model is big enough to cross the
// parallel-work thresholds (parallel.h, Workers::Split): the encoder's products and attention,
// the decoder's fc1 / fc2 at 16 rows and lm_head at one row (int8: the encoder's products with
// yielding workers, all of these with spinning ones); fp32 (XNNPACK, the single-row kernel on
// x86) and int8 (its kernel).
class ThreadingTest : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(ThreadingTest, TwoThreadsMatchOne) {
  ModelOptions o;
  o.d_model = 256;
  o.encoder_ffn = o.decoder_ffn = 512;
  o.vocab = 8192;
  o.pad = o.start = 8191;
  o.eos_bias = 1.0f;
  o.kept = {{0, 1, 2}, {}, {1, 3}, {0, 1, 2, 3}, {2}, {0, 3}};
  o.weights = GetParam();
  const std::unique_ptr<testing::TestModel> built = testing::BuildModel(o);
  ASSERT_NE(built->model, nullptr);
  const testing::TestModel& tm = *built;
  // 1 thread; 2 yielding; 2 spinning (those two without batch lanes: the products and heads
  // split over the pool); 2 with batch lanes where the operators read the weights in place
  // (lanes.h; automatic).
  std::unique_ptr<Translator> tr[4];
  for (int i = 0; i < 4; ++i) {
    TranslatorLimits limits;
    limits.max_batch = 4;
    limits.max_source_tokens = 40;
    limits.max_target_tokens = 40;
    limits.num_threads = i == 0 ? 1 : 2;
    limits.worker_wait = i == 2 ? WorkerWait::kSpin : WorkerWait::kYield;
    limits.batch_lanes = i == 3 ? 0 : 1;
    auto t = Translator::Create(tm.model, limits);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tr[i] = std::move(t).value();
  }
  std::vector<std::vector<int32_t>> sources;
  for (uint32_t s = 0; s < 4; ++s) sources.push_back(testing::RandomSource(o, 10 + 10 * s, 90 + s));
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  // Batch 1 greedy too: one decoder row, the single-row products.
  for (auto [beam, batch] : {std::pair<int, size_t>{1, 4}, {4, 4}, {1, 1}}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam;
    for (auto& t : tr) ASSERT_TRUE(t->TranslateIds(spans.data(), batch, so).ok());
    for (int other : {1, 2, 3}) {
      for (size_t s = 0; s < batch; ++s) {
        ASSERT_EQ(tr[0]->num_hypotheses(s), tr[other]->num_hypotheses(s));
        for (size_t k = 0; k < tr[0]->num_hypotheses(s); ++k) {
          const HypothesisView a = tr[0]->hypothesis(s, k), b = tr[other]->hypothesis(s, k);
          EXPECT_EQ(std::vector<int32_t>(a.ids, a.ids + a.size), std::vector<int32_t>(b.ids, b.ids + b.size))
              << "translator " << other;
          EXPECT_NEAR(a.score, b.score, 1e-5) << "translator " << other;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ThreadingTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kI8),
                         [](const ::testing::TestParamInfo<WeightFormat>& p) {
                           return std::string(WeightFormatName(p.param));
                         });

// One Model shared read-only by Translators on several threads: each thread's results equal
// those of a lone Translator (the Model is immutable after Load; XNNPACK is initialised once).
TEST(ConcurrencyTest, TranslatorsOnThreadsShareOneModel) {
  ModelOptions o;
  o.eos_bias = 1.0f;
  o.kept = {{1, 2}, {0}, {}, {0, 1, 2, 3}, {3}, {1}};
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  TranslatorLimits limits;
  limits.max_batch = 2;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 12;
  limits.max_beam = 3;
  std::vector<std::vector<int32_t>> sources;
  for (uint32_t s = 0; s < 24; ++s) sources.push_back(testing::RandomSource(o, 1 + s % 15, 200 + s));
  auto translate_all = [&](Translator& tr, std::vector<std::vector<int32_t>>* out) {
    SearchOptions so;
    so.beam_size = 3;
    for (const auto& src : sources) {
      const TokenSpan span{src.data(), src.size()};
      if (!tr.TranslateIds(&span, 1, so).ok()) return;
      const HypothesisView h = tr.hypothesis(0, 0);
      out->emplace_back(h.ids, h.ids + h.size);
    }
  };
  auto lone = Translator::Create(tm->model, limits);
  ASSERT_TRUE(lone.ok());
  std::vector<std::vector<int32_t>> want;
  translate_all(**lone, &want);
  ASSERT_EQ(want.size(), sources.size());

  constexpr int kThreads = 4;
  std::vector<std::vector<int32_t>> got[kThreads];
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto tr = Translator::Create(tm->model, limits);  // created concurrently, too
      if (tr.ok()) translate_all(**tr, &got[i]);
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(got[i], want) << "thread " << i;
}

}  // namespace
}  // namespace headwise
