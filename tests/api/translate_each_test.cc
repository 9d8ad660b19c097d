// Lines that succeed or fail on their own: Translator::TranslateEach and hw_translate_each
// (per-line status and message, the other lines' results identical to Translate's), the C
// API's hypothesis accessors (ids, finished), and the tokenizer through the C API
// (hw_model_encode / hw_model_decode and their buffer protocol).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/standard_models_suite.h"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

class TranslateEachTest : public testing::StandardModelsSuite {
 protected:
  void SetUp() override {
    auto m = Model::Load(*dir_ / "tiny.hwm");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = std::move(m).value();
    limits_.max_batch = 2;
    limits_.max_source_tokens = 16;
    limits_.max_target_tokens = 16;
    limits_.max_beam = 3;
    auto t = Translator::Create(model_, limits_);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    translator_ = std::move(t).value();
    ASSERT_EQ(hw_model_load((*dir_ / "tiny.hwm").c_str(), nullptr, &c_model_), HW_OK);
    hw_translator_params tp = hw_translator_default_params();
    tp.max_batch = limits_.max_batch;
    tp.max_source_tokens = limits_.max_source_tokens;
    tp.max_target_tokens = limits_.max_target_tokens;
    tp.max_beam = limits_.max_beam;
    ASSERT_EQ(hw_translator_create(c_model_, &tp, &c_translator_), HW_OK) << hw_last_error_message();
  }
  void TearDown() override {
    hw_translator_free(c_translator_);
    hw_model_free(c_model_);
  }

  TranslatorLimits limits_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Translator> translator_;
  hw_model* c_model_ = nullptr;
  hw_translator* c_translator_ = nullptr;
};


std::string LongLine() {
  std::string s;
  for (int i = 0; i < 30; ++i) s += "cat ";
  return s;
}

// Good lines around an invalid UTF-8 line, an over-long line and a blank line.
std::vector<std::string> MixedLines() {
  return {"Open the file.", "caf\xE9 au lait", "The cat sat on the mat.", LongLine(), "  ",
          "Read.", "Open the file."};
}

TEST_F(TranslateEachTest, BadLinesFailAloneAndTheOthersAreTranslated) {
  SearchOptions options;
  options.beam_size = 3;
  options.num_hypotheses = 2;
  const std::vector<std::string> lines = MixedLines();
  auto each = translator_->TranslateEach(lines, options);
  ASSERT_TRUE(each.ok()) << each.status().ToString();
  ASSERT_EQ(each->size(), lines.size());
  EXPECT_EQ((*each)[1].status().code(), ErrorCode::kInvalidUtf8);
  EXPECT_NE((*each)[1].status().message().find("texts[1]"), std::string::npos);
  EXPECT_EQ((*each)[3].status().code(), ErrorCode::kInputTooLong);
  EXPECT_NE((*each)[3].status().message().find("texts[3]"), std::string::npos);
  // What Translate says about a bad line is what TranslateEach records for it.
  auto whole = translator_->Translate(lines, options);
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.status().message(), (*each)[1].status().message());
  // The good lines' results are Translate's on the good lines alone: the same lines form the
  // same length-sorted batches (a different batch could differ in the last bits: one-row
  // products run another kernel than many-row ones).
  const std::vector<size_t> good = {0, 2, 4, 5, 6};
  std::vector<std::string> good_lines;
  for (size_t i : good) good_lines.push_back(lines[i]);
  auto alone = translator_->Translate(good_lines, options);
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  for (size_t j = 0; j < good.size(); ++j) {
    const size_t i = good[j];
    ASSERT_TRUE((*each)[i].ok()) << i << ": " << (*each)[i].status().ToString();
    const auto& got = *(*each)[i];
    ASSERT_EQ(got.size(), (*alone)[j].size()) << i;
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].text, (*alone)[j][k].text);
      EXPECT_EQ(got[k].ids, (*alone)[j][k].ids);
      EXPECT_EQ(got[k].score, (*alone)[j][k].score);
      EXPECT_EQ(got[k].finished, (*alone)[j][k].finished);
    }
  }
  EXPECT_EQ((*each)[4]->size(), 1u);  // the blank line: one empty hypothesis
  EXPECT_EQ((*each)[4]->front().text, "");
}

TEST_F(TranslateEachTest, OptionsAndAMissingTokenizerFailTheCall) {
  SearchOptions options;
  options.beam_size = 4;  // max_beam is 3
  auto r = translator_->TranslateEach({"Open the file."}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(translator_->TranslateEach({}, options).ok());  // also without lines
  auto m = Model::Load(*dir_ / "no_tokenizer.hwm");
  ASSERT_TRUE(m.ok());
  auto t = Translator::Create(*m, limits_);
  ASSERT_TRUE(t.ok());
  auto none = (*t)->TranslateEach({"Open the file."}, SearchOptions{});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kTokenizer);
}

TEST_F(TranslateEachTest, TheCApiGivesEachLinesStatusAndTheCppResults) {
  const std::vector<std::string> lines = MixedLines();
  std::vector<const char*> texts;
  for (const std::string& l : lines) texts.push_back(l.c_str());
  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 3;
  sp.num_hypotheses = 2;
  hw_result* r = nullptr;
  ASSERT_EQ(hw_translate_each(c_translator_, texts.data(), nullptr, texts.size(), &sp, &r), HW_OK)
      << hw_last_error_message();
  SearchOptions options;
  options.beam_size = 3;
  options.num_hypotheses = 2;
  auto want = translator_->TranslateEach(lines, options);
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(hw_result_num_sentences(r), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& w = (*want)[i];
    EXPECT_EQ(static_cast<int>(hw_result_status(r, i)), static_cast<int>(w.status().code())) << i;
    if (!w.ok()) {
      EXPECT_EQ(hw_result_error_message(r, i), w.status().message());
      EXPECT_EQ(hw_result_num_hypotheses(r, i), 0u);
      hw_hypothesis h;
      EXPECT_EQ(hw_result_get_hypothesis(r, i, 0, &h), HW_ERR_INVALID_ARGUMENT);
      continue;
    }
    EXPECT_STREQ(hw_result_error_message(r, i), "");
    ASSERT_EQ(hw_result_num_hypotheses(r, i), w->size());
    for (size_t k = 0; k < w->size(); ++k) {
      hw_hypothesis h;
      ASSERT_EQ(hw_result_get_hypothesis(r, i, k, &h), HW_OK);
      EXPECT_STREQ(h.text, (*w)[k].text.c_str());
      EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.length), (*w)[k].ids);
      EXPECT_EQ(h.score, (*w)[k].score);
      EXPECT_EQ(h.finished, (*w)[k].finished ? 1 : 0);
      EXPECT_STREQ(hw_result_text(r, i, k), h.text);
    }
  }
  EXPECT_EQ(hw_result_status(r, lines.size()), HW_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(hw_result_error_message(r, lines.size()), "");
  hw_result_free(r);

  // hw_translate: every line OK, the same accessors.
  const char* good[] = {"Open the file.", "Read."};
  ASSERT_EQ(hw_translate(c_translator_, good, 2, &sp, &r), HW_OK);
  EXPECT_EQ(hw_result_status(r, 0), HW_OK);
  hw_hypothesis h;
  ASSERT_EQ(hw_result_get_hypothesis(r, 0, 0, &h), HW_OK);
  EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.length), (*want)[0]->front().ids);
  hw_result_free(r);
}

TEST_F(TranslateEachTest, CLengthsCarryNulBytesAndCallErrorsReturnNoResult) {
  const std::string with_nul("Open\0the file.", 14);
  const char* texts[] = {with_nul.data(), "Open the file."};
  const size_t lengths[] = {with_nul.size(), 14};
  hw_result* r = nullptr;
  ASSERT_EQ(hw_translate_each(c_translator_, texts, lengths, 2, nullptr, &r), HW_OK);
  ASSERT_EQ(hw_result_status(r, 0), HW_OK);
  EXPECT_STREQ(hw_result_text(r, 0, 0), hw_result_text(r, 1, 0));  // NUL counts as a space
  hw_result_free(r);

  hw_search_params sp = hw_search_default_params();
  sp.num_hypotheses = 2;  // > beam_size 1
  r = reinterpret_cast<hw_result*>(0x1);
  EXPECT_EQ(hw_translate_each(c_translator_, texts, lengths, 2, &sp, &r), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r, nullptr);
  EXPECT_NE(std::strstr(hw_last_error_message(), "num_hypotheses"), nullptr);
  const char* with_null[] = {"a", nullptr};
  EXPECT_EQ(hw_translate_each(c_translator_, with_null, nullptr, 2, nullptr, &r),
            HW_ERR_INVALID_ARGUMENT);
  const size_t empty_lengths[] = {1, 0};
  ASSERT_EQ(hw_translate_each(c_translator_, with_null, empty_lengths, 2, nullptr, &r), HW_OK);
  hw_result_free(r);
  EXPECT_EQ(hw_translate_each(nullptr, texts, nullptr, 1, nullptr, &r), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translate_each(c_translator_, texts, nullptr, 1, nullptr, nullptr),
            HW_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(hw_translate_each(c_translator_, nullptr, nullptr, 0, nullptr, &r), HW_OK);
  EXPECT_EQ(hw_result_num_sentences(r), 0u);
  hw_result_free(r);
}

TEST_F(TranslateEachTest, TokenPathHypothesisCarriesFinished) {
  auto src = model_->EncodeSource("The cat sat on the mat.");
  ASSERT_TRUE(src.ok());
  const int32_t* ids[] = {src->data()};
  const size_t lengths[] = {src->size()};
  hw_search_params sp = hw_search_default_params();
  sp.max_length = 2;
  ASSERT_EQ(hw_translate_ids(c_translator_, ids, lengths, 1, &sp), HW_OK);
  TokenSpan span{src->data(), src->size()};
  SearchOptions options;
  options.max_length = 2;
  ASSERT_TRUE(translator_->TranslateIds(&span, 1, options).ok());
  const HypothesisView want = translator_->hypothesis(0, 0);
  hw_hypothesis h;
  ASSERT_EQ(hw_translator_get_hypothesis(c_translator_, 0, 0, &h), HW_OK);
  EXPECT_EQ(h.text, nullptr);
  EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.length),
            std::vector<int32_t>(want.ids, want.ids + want.size));
  EXPECT_EQ(h.score, want.score);
  EXPECT_EQ(h.finished, want.finished ? 1 : 0);
  EXPECT_EQ(hw_translator_get_hypothesis(c_translator_, 0, 1, &h), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translator_get_hypothesis(c_translator_, 0, 0, nullptr), HW_ERR_INVALID_ARGUMENT);
}

TEST_F(TranslateEachTest, CEncodeAndDecodeAreTheModelsTokenizer) {
  const std::string text = "The cat sat on the mat.";
  auto want = model_->EncodeSource(text);
  ASSERT_TRUE(want.ok());
  size_t n = 0;
  ASSERT_EQ(hw_model_encode(c_model_, text.data(), text.size(), nullptr, 0, &n), HW_OK);
  ASSERT_EQ(n, want->size());
  std::vector<int32_t> ids(n - 1, -1);  // one too few: the count still says how many
  ASSERT_EQ(hw_model_encode(c_model_, text.data(), text.size(), ids.data(), ids.size(), &n), HW_OK);
  EXPECT_EQ(n, want->size());
  EXPECT_EQ(ids, std::vector<int32_t>(want->begin(), want->end() - 1));
  ids.resize(n);
  ASSERT_EQ(hw_model_encode(c_model_, text.data(), text.size(), ids.data(), ids.size(), &n), HW_OK);
  EXPECT_EQ(ids, *want);

  auto decoded = model_->DecodeTarget(want->data(), want->size());
  ASSERT_TRUE(decoded.ok());
  ASSERT_EQ(hw_model_decode(c_model_, ids.data(), ids.size(), nullptr, 0, &n), HW_OK);
  EXPECT_EQ(n, decoded->size());
  std::vector<char> small(3, 'x');
  ASSERT_EQ(hw_model_decode(c_model_, ids.data(), ids.size(), small.data(), small.size(), &n), HW_OK);
  EXPECT_EQ(std::string(small.data()), decoded->substr(0, 2));  // truncated, NUL-terminated
  std::vector<char> buf(n + 1);
  ASSERT_EQ(hw_model_decode(c_model_, ids.data(), ids.size(), buf.data(), buf.size(), &n), HW_OK);
  EXPECT_EQ(std::string(buf.data()), *decoded);

  EXPECT_EQ(hw_model_encode(c_model_, "caf\xE9", 4, ids.data(), ids.size(), &n), HW_ERR_INVALID_UTF8);
  EXPECT_NE(std::strstr(hw_last_error_message(), "byte"), nullptr);
  const int32_t outside[] = {1 << 20};
  EXPECT_EQ(hw_model_decode(c_model_, outside, 1, buf.data(), buf.size(), &n), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_model_encode(c_model_, nullptr, 3, nullptr, 0, &n), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_model_encode(c_model_, "", 0, nullptr, 0, &n), HW_OK);
  EXPECT_EQ(n, 1u);  // EOS

  hw_model* bare = nullptr;
  ASSERT_EQ(hw_model_load((*dir_ / "no_tokenizer.hwm").c_str(), nullptr, &bare), HW_OK);
  EXPECT_EQ(hw_model_encode(bare, "a", 1, nullptr, 0, &n), HW_ERR_TOKENIZER);
  EXPECT_EQ(hw_model_decode(bare, ids.data(), 1, nullptr, 0, &n), HW_ERR_TOKENIZER);
  hw_model_free(bare);
}

}  // namespace
}  // namespace headwise
