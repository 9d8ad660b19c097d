// Declared limits: requests outside them are rejected with the code and a message that names
// the limit, without touching the previous results; bad limits fail Create; max_memory_bytes
// caps the planned arena.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

using testing::ModelOptions;

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tm_ = testing::BuildModel(o_);
    limits_.max_batch = 2;
    limits_.max_source_tokens = 6;
    limits_.max_target_tokens = 5;
    limits_.max_beam = 2;
    auto tr = Translator::Create(tm_->model, limits_);
    ASSERT_TRUE(tr.ok()) << tr.status().ToString();
    tr_ = std::move(tr).value();
  }
  void Expect(const Status& s, ErrorCode code, const std::string& fragment) {
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(fragment), std::string::npos) << s.ToString();
  }
  ModelOptions o_;
  TranslatorLimits limits_;
  std::unique_ptr<testing::TestModel> tm_;
  std::unique_ptr<Translator> tr_;
};

TEST_F(LimitsTest, RequestsOutsideTheLimitsAreRejectedAndKeepThePreviousResults) {
  const std::vector<int32_t> ok = testing::RandomSource(o_, 4, 80);
  const std::vector<int32_t> too_long = testing::RandomSource(o_, 7, 81);
  const std::vector<int32_t> bad_id = {3, 23, 0};
  const TokenSpan good{ok.data(), ok.size()};
  ASSERT_TRUE(tr_->TranslateIds(&good, 1, SearchOptions()).ok());
  const HypothesisView before = tr_->hypothesis(0, 0);
  const std::vector<int32_t> first(before.ids, before.ids + before.size);

  const TokenSpan three[] = {good, good, good};
  Expect(tr_->TranslateIds(three, 3, SearchOptions()), ErrorCode::kBatchTooLarge, "max_batch is 2");
  const TokenSpan long_span{too_long.data(), too_long.size()};
  Expect(tr_->TranslateIds(&long_span, 1, SearchOptions()), ErrorCode::kInputTooLong,
         "sentence 0 has 7 tokens; TranslatorLimits.max_source_tokens is 6");
  const TokenSpan empty{ok.data(), 0};
  Expect(tr_->TranslateIds(&empty, 1, SearchOptions()), ErrorCode::kInvalidArgument, "empty");
  const TokenSpan bad{bad_id.data(), bad_id.size()};
  Expect(tr_->TranslateIds(&bad, 1, SearchOptions()), ErrorCode::kInvalidArgument,
         "position 1: id 23 is outside the vocabulary");
  SearchOptions so;
  so.beam_size = 3;
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "beam_size 3");
  so.beam_size = 2;
  so.num_hypotheses = 3;
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "num_hypotheses 3");
  so.num_hypotheses = 1;
  so.max_length = 6;
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "max_length 6");
  so.max_length = 0;
  so.length_penalty = std::nanf("");
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "length_penalty");

  ASSERT_EQ(tr_->num_hypotheses(0), 1u);
  const HypothesisView after = tr_->hypothesis(0, 0);
  EXPECT_EQ(std::vector<int32_t>(after.ids, after.ids + after.size), first);
  EXPECT_EQ(tr_->num_hypotheses(1), 0u);
  EXPECT_EQ(tr_->hypothesis(0, 1).ids, nullptr);
  EXPECT_EQ(tr_->hypothesis(5, 0).ids, nullptr);

  std::vector<float> logits(5 * o_.vocab);
  const std::vector<int32_t> target = {3, 4, 5, 6, 7};
  Expect(tr_->ForcedLogits(good, {target.data(), 5}, logits.data()), ErrorCode::kInputTooLong,
         "max_target_tokens 5");
  EXPECT_TRUE(tr_->ForcedLogits(good, {target.data(), 4}, logits.data()).ok());
  Expect(tr_->ForcedLogits(long_span, {target.data(), 1}, logits.data()), ErrorCode::kInputTooLong, "source");
}

TEST_F(LimitsTest, CreateRejectsBadLimits) {
  TranslatorLimits l = limits_;
  l.max_beam = 0;
  auto r = Translator::Create(tm_->model, l);
  ASSERT_FALSE(r.ok());
  Expect(r.status(), ErrorCode::kInvalidArgument, "max_beam must be >= 1");
  l = limits_;
  l.max_source_tokens = 65;
  r = Translator::Create(tm_->model, l);
  ASSERT_FALSE(r.ok());
  Expect(r.status(), ErrorCode::kInvalidArgument, "max_position_embeddings 64");
  l = limits_;
  l.num_threads = 0;
  r = Translator::Create(tm_->model, l);
  ASSERT_FALSE(r.ok());
  Expect(r.status(), ErrorCode::kInvalidArgument, "num_threads");
  r = Translator::Create(nullptr, limits_);
  ASSERT_FALSE(r.ok());
}

TEST_F(LimitsTest, MaxMemoryBytesCapsTheArena) {
  const size_t needed = tr_->arena_bytes();
  EXPECT_GT(needed, 0u);
  TranslatorLimits l = limits_;
  l.max_memory_bytes = needed;
  auto fits = Translator::Create(tm_->model, l);
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ((*fits)->arena_bytes(), needed);
  l.max_memory_bytes = needed - 1;
  auto over = Translator::Create(tm_->model, l);
  ASSERT_FALSE(over.ok());
  Expect(over.status(), ErrorCode::kLimitExceeded,
         "need " + std::to_string(needed) + " bytes of activation memory; max_memory_bytes is " +
             std::to_string(needed - 1));
  // The plan grows with the limits: a larger beam needs more cache.
  l = limits_;
  l.max_beam = 4;
  auto bigger = Translator::Create(tm_->model, l);
  ASSERT_TRUE(bigger.ok());
  EXPECT_GT((*bigger)->arena_bytes(), needed);
}

}  // namespace
}  // namespace headwise
