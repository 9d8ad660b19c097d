// The token-id path performs zero heap allocations: this binary links the allocation counter
// (tests/support/alloc_counter.h) and counts every call made (on any thread, XNNPACK and the
// thread pool included) while TranslateIds, TranslateIdsEach and ForcedLogits run after a
// warm-up call.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/runtime/test_model.h"
#include "tests/support/alloc_counter.h"

namespace headwise {
namespace {

// The allocations escape through it, so the compiler cannot elide a malloc / free pair.
void* volatile g_escape = nullptr;

// The counter itself works, for each kind of call, or the real test below could not fail.
TEST(AllocationCounterTest, SeesNewMallocAndAlignedAllocations) {
  long counted = 0;
  {
    testing::AllocationCounter scope;
    int* a = new int(3);
    g_escape = a;
    void* b = std::malloc(16);
    g_escape = b;
    void* c = nullptr;
    if (posix_memalign(&c, 64, 128) != 0) c = nullptr;
    g_escape = c;
    delete a;
    std::free(b);
    std::free(c);
    counted = scope.count();
  }
  EXPECT_EQ(counted, 3);
}

// Parametrised over the weight format: F32, I8, and F16 with fp16_compute kAuto, which takes the
// f16 path (its F16 activation copies in the arena) where the CPU has fp16 arithmetic (qemu's
// default aarch64 CPU "max", and tests/platforms' cortex-a76 run) and the F32 fallback
// elsewhere. HEADWISE_EXPECT_FP16=1 makes the f16 case insist on the f16 path.
class AllocationTest : public ::testing::TestWithParam<WeightFormat> {};

// The same calls with and without a vocabulary shortlist in the model (the union, its
// gathered rows and the -inf rows are arena memory too), and with batch lanes (lanes.h: the
// calls of several sentences run as whole sub-batches on the pool's threads; automatic, where
// the operators read the weights in place) and without (batch_lanes 1: the products and
// attention heads split over the pool).
void CheckNoAllocation(WeightFormat format, bool shortlist, int batch_lanes);

TEST_P(AllocationTest, TranslateIdsAndForcedLogitsAllocateNothing) {
  CheckNoAllocation(GetParam(), false, 1);
}

TEST_P(AllocationTest, WithAShortlistToo) { CheckNoAllocation(GetParam(), true, 1); }

TEST_P(AllocationTest, WithBatchLanesToo) {
  CheckNoAllocation(GetParam(), false, 0);
  CheckNoAllocation(GetParam(), true, 0);
}

void CheckNoAllocation(WeightFormat format, bool shortlist, int batch_lanes) {
  testing::ModelOptions o;
  o.d_model = 64;  // large enough that the bigger products run on the pool
  o.encoder_ffn = 256;
  o.decoder_ffn = 256;
  o.vocab = 61;
  o.pad = 60;
  o.start = 60;
  o.eos_bias = 1.0f;
  o.kept = {{0, 1}, {}, {1, 2, 3}, {0}, {2}, {}};  // pruned and empty blocks
  o.weights = format;
  ModelSpec spec = testing::MakeSpec(o);
  if (shortlist) spec.shortlist = testing::MakeSyntheticShortlist(o.vocab, 4, 5, 3);
  auto loaded = testing::LoadSpec(std::move(spec));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::unique_ptr<testing::TestModel> tm = std::move(loaded).value();
  TranslatorLimits limits;
  limits.max_batch = 4;
  limits.max_source_tokens = 24;
  limits.max_target_tokens = 16;
  limits.max_beam = 4;
  limits.num_threads = 2;  // the pool's workers are counted too
  limits.batch_lanes = batch_lanes;
  auto created = Translator::Create(tm->model, limits);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Translator& tr = **created;
  ASSERT_EQ(tr.uses_shortlist(), shortlist);
  std::printf("%s; %d batch lane(s)\n", tr.precision_note().c_str(), tr.limits().batch_lanes);
  const char* expect = std::getenv("HEADWISE_EXPECT_FP16");
  if (format == WeightFormat::kF16 && expect != nullptr && std::string(expect) == "1") {
    ASSERT_EQ(tr.matmul_precision(), MatmulPrecision::kF16) << tr.precision_note();
  }

  std::vector<std::vector<int32_t>> sources;
  // Long enough that attention heads, too, are spread over the pool.
  for (uint32_t s = 0; s < 3; ++s) sources.push_back(testing::RandomSource(o, 8 + 8 * s, s));
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  SearchOptions greedy;
  SearchOptions beam;
  beam.beam_size = 4;
  beam.num_hypotheses = 3;
  beam.length_penalty = 0.9f;
  const std::vector<int32_t> target = {5, 9, 13, 2, 7};
  std::vector<float> logits((target.size() + 1) * o.vocab);
  // Target prefixes: the first two ids of `target`, none, one id.
  const std::vector<TokenSpan> prefixes = {{target.data(), 2}, {}, {target.data() + 2, 1}};
  // Sampling: the nucleus (every candidate sorted) below a minimum length, and top_k.
  SearchOptions nucleus;
  nucleus.sample = true;
  nucleus.top_p = 0.9f;
  nucleus.min_length = 2;
  SearchOptions top_k = nucleus;
  top_k.top_k = 5;
  top_k.seed = 3;

  // Warm-up: first calls may touch lazily initialised state outside headwise.
  ASSERT_TRUE(tr.TranslateIds(spans.data(), spans.size(), greedy).ok());
  ASSERT_TRUE(tr.TranslateIds(spans.data(), spans.size(), beam).ok());
  ASSERT_TRUE(tr.TranslateIds(spans.data(), spans.size(), beam, prefixes.data()).ok());
  ASSERT_TRUE(tr.TranslateIds(spans.data(), spans.size(), nucleus, prefixes.data()).ok());
  ASSERT_TRUE(tr.ForcedLogits(spans[0], {target.data(), target.size()}, logits.data()).ok());

  Status s1, s2, s3, s4, s5, s6, s7;
  size_t hyps = 0;
  long counted = 0;
  {
    testing::AllocationCounter scope;
    s1 = tr.TranslateIds(spans.data(), spans.size(), greedy);
    s2 = tr.TranslateIds(spans.data(), spans.size(), beam);
    for (size_t s = 0; s < spans.size(); ++s) {
      for (size_t k = 0; k < tr.num_hypotheses(s); ++k) hyps += tr.hypothesis(s, k).size > 0 ? 1 : 0;
    }
    s3 = tr.ForcedLogits(spans[1], {target.data(), target.size()}, logits.data());
    s4 = tr.TranslateIds(spans.data() + 2, 1, greedy);
    s5 = tr.TranslateIds(spans.data(), spans.size(), beam, prefixes.data());
    s6 = tr.TranslateIds(spans.data(), spans.size(), nucleus, prefixes.data());
    s7 = tr.TranslateIds(spans.data(), spans.size(), top_k);
    counted = scope.count();
  }
  EXPECT_TRUE(s5.ok()) << s5.ToString();
  EXPECT_TRUE(s6.ok()) << s6.ToString();
  EXPECT_TRUE(s7.ok()) << s7.ToString();
  EXPECT_TRUE(s1.ok()) << s1.ToString();
  EXPECT_TRUE(s2.ok()) << s2.ToString();
  EXPECT_TRUE(s3.ok()) << s3.ToString();
  EXPECT_TRUE(s4.ok()) << s4.ToString();
  EXPECT_GT(hyps, 0u);
  EXPECT_EQ(counted, 0) << "heap allocations during TranslateIds / ForcedLogits ("
                        << tr.precision_note() << "; " << tr.limits().batch_lanes
                        << " batch lane(s))";
}

// An observer that only counts: what it is told must not need the heap either.
class CountingObserver final : public BatchObserver {
 public:
  void OnBatch(const BatchReport& batch) override {
    ++batches;
    lines += batch.num_lines;
  }
  size_t batches = 0;
  size_t lines = 0;
};

// TranslateIdsEach: a shuffled mix of short and long sources (with one too long, which fails
// alone), sorted, cut by lines and tokens, greedy and beam n-best, results read back in input
// order, on 2 threads: no allocation once warm, the failing line included (line_code reads its
// code; its message is built only when line_status asks for it, after the count).
TEST_P(AllocationTest, TranslateIdsEachAllocatesNothing) {
  testing::ModelOptions o;
  o.d_model = 64;
  o.encoder_ffn = 256;
  o.decoder_ffn = 256;
  o.vocab = 61;
  o.pad = 60;
  o.start = 60;
  o.eos_bias = 1.0f;
  o.kept = {{0, 1}, {}, {1, 2, 3}, {0}, {2}, {}};
  o.weights = GetParam();
  const std::unique_ptr<testing::TestModel> tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  TranslatorLimits limits;
  limits.max_batch = 3;
  limits.max_source_tokens = 24;
  limits.max_target_tokens = 12;
  limits.max_beam = 4;
  limits.num_threads = 2;
  limits.sort_window = 12;
  for (int lanes : {1, 0}) {  // without batch lanes, then automatic (lanes.h)
  limits.batch_lanes = lanes;
  auto created = Translator::Create(tm->model, limits);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Translator& tr = **created;

  std::vector<std::vector<int32_t>> sources;
  for (uint32_t s = 0; s < 10; ++s) {
    sources.push_back(testing::RandomSource(o, s % 2 == 0 ? 3 + s : 20 - s, 70 + s));
  }
  sources.push_back(testing::RandomSource(o, 30, 99));  // over max_source_tokens
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  SearchOptions greedy;
  SearchOptions beam;
  beam.beam_size = 4;
  beam.num_hypotheses = 2;
  CountingObserver observer;
  BatchOptions batching;
  batching.max_tokens = 40;
  batching.observer = &observer;

  // Target prefixes on every other line.
  const std::vector<int32_t> prefix_ids = {5, 9};
  std::vector<TokenSpan> prefixes;
  for (size_t i = 0; i < spans.size(); ++i) {
    prefixes.push_back(i % 2 ? TokenSpan{} : TokenSpan{prefix_ids.data(), prefix_ids.size()});
  }
  ASSERT_TRUE(tr.TranslateIdsEach(spans.data(), spans.size(), greedy, batching).ok());
  ASSERT_TRUE(tr.TranslateIdsEach(spans.data(), spans.size(), beam, batching).ok());
  ASSERT_TRUE(
      tr.TranslateIdsEach(spans.data(), spans.size(), beam, batching, prefixes.data()).ok());
  SearchOptions sampled;  // every candidate in id order
  sampled.sample = true;
  sampled.seed = 11;
  ASSERT_TRUE(tr.TranslateIdsEach(spans.data(), spans.size(), sampled, batching).ok());
  ASSERT_EQ(tr.line_status(10).code(), ErrorCode::kInputTooLong);

  Status s1, s2, s3, s4;
  size_t hyps = 0;
  bool too_long_failed = false;
  long counted = 0;
  {
    testing::AllocationCounter scope;
    s1 = tr.TranslateIdsEach(spans.data(), spans.size(), greedy, batching);
    s2 = tr.TranslateIdsEach(spans.data(), spans.size(), beam, batching);
    for (size_t i = 0; i < spans.size(); ++i) {
      for (size_t k = 0; k < tr.num_hypotheses(i); ++k) hyps += tr.hypothesis(i, k).size > 0 ? 1 : 0;
    }
    too_long_failed = tr.line_code(10) == ErrorCode::kInputTooLong;
    s3 = tr.TranslateIdsEach(spans.data(), spans.size(), beam, batching, prefixes.data());
    s4 = tr.TranslateIdsEach(spans.data(), spans.size(), sampled, batching);
    counted = scope.count();
  }
  EXPECT_TRUE(s3.ok()) << s3.ToString();
  EXPECT_TRUE(s4.ok()) << s4.ToString();
  EXPECT_EQ(tr.line_status(10).code(), ErrorCode::kInputTooLong);  // builds the message
  EXPECT_TRUE(s1.ok()) << s1.ToString();
  EXPECT_TRUE(s2.ok()) << s2.ToString();
  EXPECT_TRUE(too_long_failed);
  EXPECT_GT(hyps, 10u);
  EXPECT_GT(observer.batches, 4u);  // the budget cut more batches than lines / max_batch
  EXPECT_EQ(counted, 0) << "heap allocations during TranslateIdsEach (" << tr.precision_note()
                        << "; " << tr.limits().batch_lanes << " batch lane(s))";
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, AllocationTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kF16,
                                           WeightFormat::kI8),
                         [](const ::testing::TestParamInfo<WeightFormat>& i) {
                           return std::string(WeightFormatName(i.param));
                         });

}  // namespace
}  // namespace headwise
