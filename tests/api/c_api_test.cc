// The C API over the C++ API: argument checks, error codes and messages, ownership, and that the
// C results are the C++ results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/standard_models_suite.h"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

class CApiTest : public testing::StandardModelsSuite {
 protected:
  void SetUp() override {
    ASSERT_EQ(hw_model_load((*dir_ / "tiny.hwm").c_str(), nullptr, &model_), HW_OK)
        << hw_last_error_message();
    const TranslatorLimits l = TwinLimits();
    hw_translator_params tp = hw_translator_default_params();
    tp.max_batch = l.max_batch;
    tp.max_source_tokens = l.max_source_tokens;
    tp.max_target_tokens = l.max_target_tokens;
    tp.max_beam = l.max_beam;
    ASSERT_EQ(hw_translator_create(model_, &tp, &translator_), HW_OK) << hw_last_error_message();
  }
  // translator_'s limits.
  static TranslatorLimits TwinLimits() {
    TranslatorLimits l;
    l.max_batch = 3;
    l.max_source_tokens = 48;
    l.max_target_tokens = 20;
    l.max_beam = 3;
    return l;
  }
  // A C++ Translator with translator_'s limits on `model`: what translator_ must give.
  static Result<std::unique_ptr<Translator>> CppTwin(const std::shared_ptr<const Model>& model) {
    return Translator::Create(model, TwinLimits());
  }
  void TearDown() override {
    hw_translator_free(translator_);
    hw_model_free(model_);
  }

  hw_model* model_ = nullptr;
  hw_translator* translator_ = nullptr;
};


TEST(CApiBasics, StatusNamesMatchTheCppCodes) {
  EXPECT_STREQ(hw_status_name(HW_OK), "OK");
  EXPECT_STREQ(hw_status_name(HW_ERR_INVALID_UTF8), "INVALID_UTF8");
  EXPECT_STREQ(hw_status_name(HW_ERR_OUT_OF_MEMORY), "OUT_OF_MEMORY");
  EXPECT_STREQ(hw_status_name(static_cast<hw_status>(999)), "UNKNOWN");
  for (ErrorCode c : {ErrorCode::kInvalidArgument, ErrorCode::kInputTooLong, ErrorCode::kBatchTooLarge,
                      ErrorCode::kIoError, ErrorCode::kChecksumMismatch, ErrorCode::kTokenizer,
                      ErrorCode::kInternal}) {
    EXPECT_STREQ(hw_status_name(static_cast<hw_status>(c)), ErrorCodeName(c));
  }
  EXPECT_STREQ(hw_version(), Version());
}

TEST(CApiBasics, DefaultParamsAreTheCppDefaults) {
  const hw_load_params lp = hw_load_default_params();
  EXPECT_EQ(lp.verify_checksum != 0, LoadOptions{}.verify_checksum);
  const hw_translator_params tp = hw_translator_default_params();
  const TranslatorLimits l;
  EXPECT_EQ(tp.max_batch, l.max_batch);
  EXPECT_EQ(tp.max_source_tokens, l.max_source_tokens);
  EXPECT_EQ(tp.max_target_tokens, l.max_target_tokens);
  EXPECT_EQ(tp.max_beam, l.max_beam);
  EXPECT_EQ(tp.num_threads, l.num_threads);
  EXPECT_EQ(tp.max_memory_bytes, l.max_memory_bytes);
  EXPECT_EQ(tp.fp16_compute, HW_FP16_AUTO);
  EXPECT_EQ(tp.fp16_compute, static_cast<int>(l.fp16_compute));
  EXPECT_EQ(tp.worker_wait, HW_WORKERS_YIELD);
  EXPECT_EQ(tp.worker_wait, static_cast<int>(l.worker_wait));
  EXPECT_EQ(tp.batch_lanes, l.batch_lanes);
  const hw_search_params sp = hw_search_default_params();
  const SearchOptions s;
  EXPECT_EQ(sp.beam_size, s.beam_size);
  EXPECT_EQ(sp.num_hypotheses, s.num_hypotheses);
  EXPECT_EQ(sp.length_penalty, s.length_penalty);
  EXPECT_EQ(sp.max_length, s.max_length);
  EXPECT_EQ(sp.beam_stop, static_cast<int>(s.beam_stop));
  EXPECT_EQ(sp.beam_stop, HW_BEAM_STOP_EXHAUSTIVE);
  EXPECT_EQ(sp.min_length, s.min_length);
  EXPECT_EQ(sp.sample, 0);
  EXPECT_EQ(sp.top_k, s.top_k);
  EXPECT_EQ(sp.top_p, s.top_p);
  EXPECT_EQ(sp.temperature, s.temperature);
  EXPECT_EQ(sp.seed, s.seed);
}

TEST(CApiBasics, NullArgumentsAreInvalidArgumentsWithAMessage) {
  hw_model* m = reinterpret_cast<hw_model*>(0x1);
  EXPECT_EQ(hw_model_load(nullptr, nullptr, &m), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);  // outputs are cleared on failure
  EXPECT_NE(std::strstr(hw_last_error_message(), "path"), nullptr) << hw_last_error_message();
  EXPECT_EQ(hw_model_load("x.hwm", nullptr, nullptr), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "out_model"), nullptr);

  hw_translator* t = nullptr;
  EXPECT_EQ(hw_translator_create(nullptr, nullptr, &t), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
  EXPECT_NE(std::strstr(hw_last_error_message(), "model"), nullptr);

  hw_result* r = nullptr;
  const char* texts[] = {"a"};
  EXPECT_EQ(hw_translate(nullptr, texts, 1, nullptr, &r), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translate_ids(nullptr, nullptr, nullptr, 0, nullptr), HW_ERR_INVALID_ARGUMENT);
  const int32_t* ids = nullptr;
  size_t len = 0;
  float score = 0;
  EXPECT_EQ(hw_translator_hypothesis(nullptr, 0, 0, &ids, &len, &score), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_model_vocab_size(nullptr), 0);
  EXPECT_EQ(hw_translator_num_hypotheses(nullptr, 0), 0u);
  EXPECT_EQ(hw_result_num_sentences(nullptr), 0u);
  EXPECT_EQ(hw_result_num_hypotheses(nullptr, 0), 0u);
  EXPECT_EQ(hw_result_text(nullptr, 0, 0), nullptr);
  EXPECT_TRUE(std::isnan(hw_result_score(nullptr, 0, 0)));
  hw_model_free(nullptr);
  hw_translator_free(nullptr);
  hw_result_free(nullptr);
}

TEST(CApiBasics, MissingFileIsAnIoErrorNamingThePath) {
  hw_model* m = nullptr;
  EXPECT_EQ(hw_model_load("/nonexistent/dir/model.hwm", nullptr, &m), HW_ERR_IO);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::strstr(hw_last_error_message(), "/nonexistent/dir/model.hwm"), nullptr)
      << hw_last_error_message();
}

TEST(CApiBasics, LastErrorIsPerThread) {
  hw_model* m = nullptr;
  ASSERT_EQ(hw_model_load(nullptr, nullptr, &m), HW_ERR_INVALID_ARGUMENT);
  std::string other;
  std::thread([&] { other = hw_last_error_message(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_STRNE(hw_last_error_message(), "");
}

TEST_F(CApiTest, TranslateGivesTheCppResults) {
  const char* texts[] = {"Open the file.", "", "The cat sat on the mat.", "Read.", "   "};
  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 3;
  sp.num_hypotheses = 2;
  hw_result* r = nullptr;
  ASSERT_EQ(hw_translate(translator_, texts, 5, &sp, &r), HW_OK) << hw_last_error_message();
  ASSERT_EQ(hw_result_num_sentences(r), 5u);

  auto m = Model::Load(*dir_ / "tiny.hwm");
  ASSERT_TRUE(m.ok());
  auto cpp = CppTwin(*m);
  ASSERT_TRUE(cpp.ok());
  SearchOptions so;
  so.beam_size = 3;
  so.num_hypotheses = 2;
  auto expected = (*cpp)->Translate({texts, texts + 5}, so);
  ASSERT_TRUE(expected.ok());
  for (size_t i = 0; i < 5; ++i) {
    ASSERT_EQ(hw_result_num_hypotheses(r, i), (*expected)[i].size()) << i;
    for (size_t k = 0; k < (*expected)[i].size(); ++k) {
      EXPECT_STREQ(hw_result_text(r, i, k), (*expected)[i][k].text.c_str());
      EXPECT_EQ(hw_result_score(r, i, k), (*expected)[i][k].score);
    }
    EXPECT_EQ(hw_result_text(r, i, 2), nullptr);
    EXPECT_TRUE(std::isnan(hw_result_score(r, i, 2)));
  }
  EXPECT_STREQ(hw_result_text(r, 1, 0), "");
  EXPECT_EQ(hw_result_num_hypotheses(r, 5), 0u);
  EXPECT_EQ(hw_result_text(r, 5, 0), nullptr);
  hw_result_free(r);
}

TEST_F(CApiTest, ResultOutlivesTranslatorAndModel) {
  const char* texts[] = {"Open the file."};
  hw_result* r = nullptr;
  ASSERT_EQ(hw_translate(translator_, texts, 1, nullptr, &r), HW_OK) << hw_last_error_message();
  const std::string text = hw_result_text(r, 0, 0);
  hw_translator_free(translator_);
  hw_model_free(model_);
  translator_ = nullptr;
  model_ = nullptr;
  EXPECT_EQ(text, hw_result_text(r, 0, 0));
  hw_result_free(r);
}

TEST_F(CApiTest, TranslatorKeepsItsModelAlive) {
  hw_model_free(model_);
  model_ = nullptr;
  const char* texts[] = {"The weather is nice today."};
  hw_result* r = nullptr;
  ASSERT_EQ(hw_translate(translator_, texts, 1, nullptr, &r), HW_OK) << hw_last_error_message();
  EXPECT_NE(hw_result_text(r, 0, 0), nullptr);
  hw_result_free(r);
}

TEST_F(CApiTest, TranslateErrorsCarryCodeAndMessage) {
  hw_result* r = reinterpret_cast<hw_result*>(0x1);
  const char* bad_utf8[] = {"fine", "caf\xE9"};
  EXPECT_EQ(hw_translate(translator_, bad_utf8, 2, nullptr, &r), HW_ERR_INVALID_UTF8);
  EXPECT_EQ(r, nullptr);
  EXPECT_NE(std::strstr(hw_last_error_message(), "texts[1]"), nullptr) << hw_last_error_message();

  std::string words;
  for (int i = 0; i < 60; ++i) words += "cat ";
  const char* too_long[] = {words.c_str()};
  EXPECT_EQ(hw_translate(translator_, too_long, 1, nullptr, &r), HW_ERR_INPUT_TOO_LONG);
  EXPECT_NE(std::strstr(hw_last_error_message(), "max_source_tokens 48"), nullptr)
      << hw_last_error_message();

  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 4;  // max_beam is 3
  const char* ok[] = {"Open the file."};
  EXPECT_EQ(hw_translate(translator_, ok, 1, &sp, &r), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "beam_size 4"), nullptr) << hw_last_error_message();

  const char* with_null[] = {"a", nullptr};
  EXPECT_EQ(hw_translate(translator_, with_null, 2, nullptr, &r), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "texts[1] is NULL"), nullptr);
  EXPECT_EQ(hw_translate(translator_, nullptr, 1, nullptr, &r), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translate(translator_, ok, 1, nullptr, nullptr), HW_ERR_INVALID_ARGUMENT);

  // n == 0 is a valid, empty call.
  ASSERT_EQ(hw_translate(translator_, nullptr, 0, nullptr, &r), HW_OK);
  EXPECT_EQ(hw_result_num_sentences(r), 0u);
  hw_result_free(r);
}

TEST_F(CApiTest, TranslatorCreateRejectsBadLimits) {
  hw_translator_params tp = hw_translator_default_params();
  tp.max_beam = 0;
  hw_translator* t = reinterpret_cast<hw_translator*>(0x1);
  EXPECT_EQ(hw_translator_create(model_, &tp, &t), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
  EXPECT_STRNE(hw_last_error_message(), "");
}

// tiny.hwm is an F32 model: auto gives f32, require is the caller's error, a value outside
// the enum is named. (fp16 models: tests/runtime/fp16_compute_test.cc.)
TEST_F(CApiTest, Fp16ComputeAndPrecision) {
  EXPECT_EQ(hw_translator_precision(translator_), HW_PRECISION_F32);
  EXPECT_STREQ(hw_precision_name(hw_translator_precision(translator_)), "f32");
  EXPECT_STREQ(hw_precision_name(HW_PRECISION_F16), "f16");
  EXPECT_STREQ(hw_precision_name(HW_PRECISION_INT8), "int8");
  EXPECT_NE(std::string(hw_translator_precision_note(translator_)).find("F32"), std::string::npos);
  EXPECT_EQ(hw_translator_precision(nullptr), HW_PRECISION_F32);
  EXPECT_STREQ(hw_translator_precision_note(nullptr), "");
  // tiny.hwm is F32: the in-place kernels where this CPU has them, else XNNPACK.
  EXPECT_EQ(std::string(hw_translator_kernel_paths(translator_)).rfind("fp32: ", 0), 0u)
      << hw_translator_kernel_paths(translator_);
  EXPECT_STREQ(hw_translator_kernel_paths(nullptr), "");
  hw_translator_params tp = hw_translator_default_params();
  hw_translator* t = nullptr;
  tp.fp16_compute = HW_FP16_REQUIRE;
  EXPECT_EQ(hw_translator_create(model_, &tp, &t), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hw_last_error_message()).find("no F16 weight matrices"), std::string::npos);
  tp.fp16_compute = 9;
  EXPECT_EQ(hw_translator_create(model_, &tp, &t), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hw_last_error_message()).find("fp16_compute"), std::string::npos);
  tp.fp16_compute = HW_FP16_OFF;
  ASSERT_EQ(hw_translator_create(model_, &tp, &t), HW_OK);
  EXPECT_EQ(hw_translator_precision(t), HW_PRECISION_F32);
  hw_translator_free(t);
}

// worker_wait: both values make a translator that gives the default's translation; a value
// outside the enum is named.
TEST_F(CApiTest, WorkerWait) {
  const char* texts[] = {"Open the file."};
  hw_search_params sp = hw_search_default_params();
  hw_result* want = nullptr;
  ASSERT_EQ(hw_translate(translator_, texts, 1, &sp, &want), HW_OK);
  for (int wait : {HW_WORKERS_YIELD, HW_WORKERS_SPIN}) {
    hw_translator_params tp = hw_translator_default_params();
    tp.num_threads = 2;
    tp.worker_wait = wait;
    hw_translator* t = nullptr;
    ASSERT_EQ(hw_translator_create(model_, &tp, &t), HW_OK) << hw_last_error_message();
    hw_result* got = nullptr;
    ASSERT_EQ(hw_translate(t, texts, 1, &sp, &got), HW_OK);
    EXPECT_STREQ(hw_result_text(got, 0, 0), hw_result_text(want, 0, 0)) << "worker_wait " << wait;
    hw_result_free(got);
    hw_translator_free(t);
  }
  hw_result_free(want);
  hw_translator_params tp = hw_translator_default_params();
  tp.worker_wait = 7;
  hw_translator* t = nullptr;
  EXPECT_EQ(hw_translator_create(model_, &tp, &t), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hw_last_error_message()).find("worker_wait"), std::string::npos)
      << hw_last_error_message();
  EXPECT_EQ(t, nullptr);
}

// batch_lanes: default 0 (automatic), resolved by hw_translator_batch_lanes; lanes and no lanes
// give the same translations of a batch; a negative value is named.
TEST_F(CApiTest, BatchLanes) {
  EXPECT_EQ(hw_translator_default_params().batch_lanes, 0);
  EXPECT_EQ(hw_translator_batch_lanes(nullptr), 0);
  EXPECT_EQ(hw_translator_batch_lanes(translator_), 1);  // one thread
  const char* texts[] = {"Open the file.", "Save changes before closing?", "Quit", "Help"};
  hw_search_params sp = hw_search_default_params();
  hw_result* results[2] = {nullptr, nullptr};
  for (int lanes : {1, 0}) {
    hw_translator_params tp = hw_translator_default_params();
    tp.num_threads = 2;
    tp.batch_lanes = lanes;
    hw_translator* t = nullptr;
    ASSERT_EQ(hw_translator_create(model_, &tp, &t), HW_OK) << hw_last_error_message();
    if (lanes == 1) {
      EXPECT_EQ(hw_translator_batch_lanes(t), 1);
    }
    if (lanes == 0) {
      const bool in_place = std::string(hw_translator_kernel_paths(t)).find("xnnpack") == std::string::npos;
      EXPECT_EQ(hw_translator_batch_lanes(t), in_place ? 2 : 1) << hw_translator_kernel_paths(t);
    }
    ASSERT_EQ(hw_translate(t, texts, 4, &sp, &results[lanes == 1 ? 0 : 1]), HW_OK);
    hw_translator_free(t);
  }
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_STREQ(hw_result_text(results[0], i, 0), hw_result_text(results[1], i, 0)) << texts[i];
  }
  hw_result_free(results[0]);
  hw_result_free(results[1]);
  hw_translator_params tp = hw_translator_default_params();
  tp.batch_lanes = -2;
  hw_translator* t = nullptr;
  EXPECT_EQ(hw_translator_create(model_, &tp, &t), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hw_last_error_message()).find("batch_lanes"), std::string::npos)
      << hw_last_error_message();
  EXPECT_EQ(t, nullptr);
}

TEST_F(CApiTest, TranslateIdsGivesTheCppHypotheses) {
  auto m = Model::Load(*dir_ / "tiny.hwm");
  ASSERT_TRUE(m.ok());
  auto a = (*m)->EncodeSource("Open the file.");
  auto b = (*m)->EncodeSource("Thank you very much for your help!");
  ASSERT_TRUE(a.ok() && b.ok());
  const int32_t* ids[] = {a->data(), b->data()};
  const size_t lengths[] = {a->size(), b->size()};
  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 3;
  sp.num_hypotheses = 3;
  ASSERT_EQ(hw_translate_ids(translator_, ids, lengths, 2, &sp), HW_OK) << hw_last_error_message();
  EXPECT_EQ(hw_model_vocab_size(model_), (*m)->info().vocab_size);

  auto cpp = CppTwin(*m);
  ASSERT_TRUE(cpp.ok());
  const TokenSpan spans[] = {{a->data(), a->size()}, {b->data(), b->size()}};
  SearchOptions so;
  so.beam_size = 3;
  so.num_hypotheses = 3;
  ASSERT_TRUE((*cpp)->TranslateIds(spans, 2, so).ok());
  for (size_t s = 0; s < 2; ++s) {
    ASSERT_EQ(hw_translator_num_hypotheses(translator_, s), (*cpp)->num_hypotheses(s));
    for (size_t k = 0; k < (*cpp)->num_hypotheses(s); ++k) {
      const int32_t* out = nullptr;
      size_t len = 0;
      float score = 0;
      ASSERT_EQ(hw_translator_hypothesis(translator_, s, k, &out, &len, &score), HW_OK);
      const HypothesisView v = (*cpp)->hypothesis(s, k);
      EXPECT_EQ(std::vector<int32_t>(out, out + len), std::vector<int32_t>(v.ids, v.ids + v.size));
      EXPECT_EQ(score, v.score);
    }
  }
  const int32_t* out = nullptr;
  size_t len = 0;
  float score = 0;
  EXPECT_EQ(hw_translator_hypothesis(translator_, 2, 0, &out, &len, &score), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translator_hypothesis(translator_, 0, 3, &out, &len, &score), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "hypothesis 3"), nullptr) << hw_last_error_message();
  EXPECT_EQ(hw_translator_hypothesis(translator_, 0, 0, nullptr, &len, &score), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translator_num_hypotheses(translator_, 2), 0u);

  // The text path replaces the translator's results: the id results are gone, not stale.
  const char* texts[] = {"Read."};
  hw_result* r = nullptr;
  ASSERT_EQ(hw_translate(translator_, texts, 1, nullptr, &r), HW_OK);
  hw_result_free(r);
  EXPECT_EQ(hw_translator_num_hypotheses(translator_, 0), 0u);
  EXPECT_EQ(hw_translator_hypothesis(translator_, 0, 0, &out, &len, &score), HW_ERR_INVALID_ARGUMENT);
}

// Sampling and the minimum length reach the runtime as the C++ options say: the same ids and
// scores for each setting, on the id and the text path; a refused setting names its field.
TEST_F(CApiTest, SamplingAndMinLengthGiveTheCppResults) {
  auto m = Model::Load(*dir_ / "tiny.hwm");
  ASSERT_TRUE(m.ok());
  auto a = (*m)->EncodeSource("Open the file.");
  ASSERT_TRUE(a.ok());
  const int32_t* ids[] = {a->data()};
  const size_t lengths[] = {a->size()};
  auto cpp = CppTwin(*m);
  ASSERT_TRUE(cpp.ok());
  const TokenSpan span{a->data(), a->size()};
  for (int variant = 0; variant < 4; ++variant) {
    hw_search_params sp = hw_search_default_params();
    SearchOptions so;
    if (variant == 0 || variant == 1) {
      sp.sample = 1;
      sp.seed = so.seed = 0xF00DF00DF00DF00Dull + static_cast<uint64_t>(variant);
      sp.top_k = so.top_k = variant == 1 ? 4 : 0;
      sp.top_p = so.top_p = variant == 1 ? 0.8f : 1.0f;
      sp.temperature = so.temperature = variant == 1 ? 0.7f : 1.3f;
      so.sample = true;
    }
    if (variant >= 1) sp.min_length = so.min_length = 3 + variant;
    if (variant == 3) sp.beam_size = so.beam_size = 3;
    SCOPED_TRACE("variant " + std::to_string(variant));
    ASSERT_EQ(hw_translate_ids(translator_, ids, lengths, 1, &sp), HW_OK) << hw_last_error_message();
    ASSERT_TRUE((*cpp)->TranslateIds(&span, 1, so).ok());
    const int32_t* out = nullptr;
    size_t len = 0;
    float score = 0;
    ASSERT_EQ(hw_translator_hypothesis(translator_, 0, 0, &out, &len, &score), HW_OK);
    const HypothesisView v = (*cpp)->hypothesis(0, 0);
    EXPECT_EQ(std::vector<int32_t>(out, out + len), std::vector<int32_t>(v.ids, v.ids + v.size));
    EXPECT_EQ(score, v.score);
    if (variant >= 1) {
      EXPECT_GE(len, static_cast<size_t>(sp.min_length));
    }
    const char* texts[] = {"Open the file."};
    hw_result* r = nullptr;
    ASSERT_EQ(hw_translate(translator_, texts, 1, &sp, &r), HW_OK) << hw_last_error_message();
    auto text = (*cpp)->Translate({"Open the file."}, so);
    ASSERT_TRUE(text.ok());
    EXPECT_STREQ(hw_result_text(r, 0, 0), (*text)[0][0].text.c_str());
    hw_result_free(r);
  }
  hw_search_params sp = hw_search_default_params();
  sp.temperature = 0.5f;  // without sample
  EXPECT_EQ(hw_translate_ids(translator_, ids, lengths, 1, &sp), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "temperature applies only to sampling"), nullptr)
      << hw_last_error_message();
  sp = hw_search_default_params();
  sp.sample = 1;
  sp.beam_size = 2;
  sp.num_hypotheses = 1;
  EXPECT_EQ(hw_translate_ids(translator_, ids, lengths, 1, &sp), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "sample needs beam_size 1"), nullptr)
      << hw_last_error_message();
  sp = hw_search_default_params();
  sp.min_length = 20;  // max_target_tokens
  EXPECT_EQ(hw_translate_ids(translator_, ids, lengths, 1, &sp), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "min_length 20"), nullptr) << hw_last_error_message();
}

TEST_F(CApiTest, TranslateIdsLimitsAndArguments) {
  const int32_t sentence[] = {5, 6, 7, testing::kEos};
  const int32_t* ids[] = {sentence, sentence, sentence, sentence};
  const size_t lengths[] = {4, 4, 4, 4};
  EXPECT_EQ(hw_translate_ids(translator_, ids, lengths, 4, nullptr), HW_ERR_BATCH_TOO_LARGE);
  EXPECT_NE(std::strstr(hw_last_error_message(), "max_batch 3"), nullptr) << hw_last_error_message();
  EXPECT_EQ(hw_translator_num_hypotheses(translator_, 0), 0u);

  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 4;
  EXPECT_EQ(hw_translate_ids(translator_, ids, lengths, 1, &sp), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translate_ids(translator_, nullptr, lengths, 1, nullptr), HW_ERR_INVALID_ARGUMENT);
  const int32_t* null_row[] = {nullptr};
  EXPECT_EQ(hw_translate_ids(translator_, null_row, lengths, 1, nullptr), HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "ids[0]"), nullptr);

  std::vector<int32_t> too_long(49, 5);
  too_long.back() = testing::kEos;
  const int32_t* long_ids[] = {too_long.data()};
  const size_t long_len[] = {too_long.size()};
  EXPECT_EQ(hw_translate_ids(translator_, long_ids, long_len, 1, nullptr), HW_ERR_INPUT_TOO_LONG);

  ASSERT_EQ(hw_translate_ids(translator_, ids, lengths, 3, nullptr), HW_OK) << hw_last_error_message();
  EXPECT_EQ(hw_translator_num_hypotheses(translator_, 2), 1u);
}

}  // namespace
}  // namespace headwise
