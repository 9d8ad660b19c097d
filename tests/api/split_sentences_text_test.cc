// BatchOptions::split_sentences on the text path (Translate, TranslateEach, the C API): a line
// translates as its sentences do on their own, joined by the whitespace between them, with the
// documented ids, score and finished; sort windows counted in sentences; each sentence checked
// against max_source_tokens; what the option cannot combine with is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/standard_models_suite.h"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

class SplitSentencesTextTest : public testing::TinyModelSuite {
 protected:
  static std::unique_ptr<Translator> Make(int max_batch, int sort_window, int max_source = 48) {
    return MakeTiny(max_batch, max_source, 16, 3, sort_window);
  }
};

// Paragraphs (separators of one and two spaces and a tab), single sentences and a blank line.
std::vector<std::string> Paragraphs() {
  return {"Open the file. The cat sat on the mat.",
          "Where?",
          "Thank you very much for your help!  It is late.\tRead.",
          "   ",
          "My brother lives in a big city. Numbers like 42 and 2024 appear in text too. "
          "Press the button to continue.",
          "Use e.g. this one. Close the window."};
}

// What split_sentences promises for `line`: its sentences translated one by one (batch 1),
// joined by the text between them; ids one after the other; the line's score recovered from
// the sentences' scores and lengths.
TextHypothesis Expected(Translator& one, const std::string& line, const SearchOptions& so) {
  auto spans = SplitSentences(line);
  EXPECT_TRUE(spans.ok());
  TextHypothesis want;
  want.finished = true;
  float log_prob = 0.0f, length = 0.0f;
  size_t previous_end = 0;
  for (const SentenceSpan& s : *spans) {
    auto got = one.Translate({line.substr(s.begin, s.end - s.begin)}, so);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    const TextHypothesis& h = (*got)[0][0];
    const float len = static_cast<float>(h.ids.size() + (h.finished ? 1 : 0));
    log_prob += h.score * std::pow(len, so.length_penalty);
    length += len;
    want.finished = want.finished && h.finished;
    want.ids.insert(want.ids.end(), h.ids.begin(), h.ids.end());
    if (h.text.empty()) continue;
    if (!want.text.empty()) want.text += line.substr(previous_end, s.begin - previous_end);
    want.text += h.text;
    previous_end = s.end;
  }
  want.score = length > 0.0f ? log_prob / std::pow(length, so.length_penalty) : 0.0f;
  return want;
}

class Recorder final : public BatchObserver {
 public:
  void OnBatch(const BatchReport& b) override { batches.emplace_back(b.lines, b.lines + b.num_lines); }
  std::vector<std::vector<size_t>> batches;
};

TEST_F(SplitSentencesTextTest, ALineTranslatesAsItsSentencesJoined) {
  const std::vector<std::string> lines = Paragraphs();
  auto one = Make(1, 1);
  ASSERT_NE(one, nullptr);
  for (int beam : {1, 3}) {
    for (float penalty : {1.0f, 0.6f}) {
      SCOPED_TRACE("beam " + std::to_string(beam) + " penalty " + std::to_string(penalty));
      SearchOptions so;
      so.beam_size = beam;
      so.length_penalty = penalty;
      // A sort window of 3 sentences: the 11 sentences run in four windows, which cut through
      // lines.
      for (int window : {3, 64}) {
        auto many = Make(3, window);
        ASSERT_NE(many, nullptr);
        BatchOptions b;
        b.split_sentences = true;
        Recorder seen;
        b.observer = &seen;
        auto got = many->Translate(lines, so, b);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_EQ(got->size(), lines.size());
        size_t sentences = 0;
        for (size_t i = 0; i < lines.size(); ++i) {
          ASSERT_EQ((*got)[i].size(), 1u) << "line " << i;
          const TextHypothesis want = Expected(*one, lines[i], so);
          const TextHypothesis& h = (*got)[i][0];
          EXPECT_EQ(h.text, want.text) << "line " << i;
          EXPECT_EQ(h.ids, want.ids) << "line " << i;
          EXPECT_NEAR(h.score, want.score, 1e-4f) << "line " << i;
          EXPECT_EQ(h.finished, want.finished) << "line " << i;
          sentences += SplitSentences(lines[i])->size();
        }
        // Every sentence ran in exactly one batch, named by its line.
        std::vector<size_t> times(lines.size(), 0);
        size_t units = 0;
        for (const auto& batch : seen.batches) {
          EXPECT_LE(batch.size(), 3u);
          for (size_t line : batch) ++times[line];
          units += batch.size();
        }
        EXPECT_EQ(units, sentences);
        for (size_t i = 0; i < lines.size(); ++i) {
          EXPECT_EQ(times[i], SplitSentences(lines[i])->size()) << "line " << i;
        }
      }
    }
  }
  // The check has teeth: the joined translations are not those of the whole lines.
  auto whole = one->Translate({lines[0], lines[2]}, SearchOptions{});
  BatchOptions b;
  b.split_sentences = true;
  auto split = one->Translate({lines[0], lines[2]}, SearchOptions{}, b);
  ASSERT_TRUE(whole.ok() && split.ok());
  EXPECT_TRUE((*whole)[0][0].ids != (*split)[0][0].ids || (*whole)[1][0].ids != (*split)[1][0].ids);
}

TEST_F(SplitSentencesTextTest, EachSentenceMeetsTheSourceLimit) {
  std::string long_sentence = "The cat";
  for (int i = 0; i < 30; ++i) long_sentence += " sat";
  long_sentence += ".";
  // Two sentences that each fit in 24 tokens where the whole line does not.
  const std::string fits = "Thank you very much for your help! My brother lives in a big city.";
  auto t = Make(2, 0, 24);
  ASSERT_NE(t, nullptr);
  ASSERT_GT(tiny()->EncodeSource(fits)->size(), 24u);
  BatchOptions b;
  b.split_sentences = true;
  auto each = t->TranslateEach({fits, "Open the file. " + long_sentence, "Where?"}, SearchOptions{}, b);
  ASSERT_TRUE(each.ok()) << each.status().ToString();
  ASSERT_TRUE((*each)[0].ok()) << (*each)[0].status().ToString();
  EXPECT_FALSE((*each)[0]->front().text.empty());
  ASSERT_FALSE((*each)[1].ok());
  EXPECT_EQ((*each)[1].status().code(), ErrorCode::kInputTooLong);
  EXPECT_NE((*each)[1].status().message().find("texts[1]: sentence 2 of 2 (bytes 15-"),
            std::string::npos)
      << (*each)[1].status().message();
  EXPECT_TRUE((*each)[2].ok());
  // Without splitting the first line is too long; Translate fails on the second line's sentence.
  auto unsplit = t->TranslateEach({fits}, SearchOptions{});
  ASSERT_TRUE(unsplit.ok());
  EXPECT_EQ((*unsplit)[0].status().code(), ErrorCode::kInputTooLong);
  auto all = t->Translate({fits, "Open the file. " + long_sentence}, SearchOptions{}, b);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), ErrorCode::kInputTooLong);
}

TEST_F(SplitSentencesTextTest, WhatItCannotCombineWithIsRefused) {
  auto t = Make(2, 0);
  ASSERT_NE(t, nullptr);
  BatchOptions b;
  b.split_sentences = true;
  SearchOptions nbest;
  nbest.beam_size = 2;
  nbest.num_hypotheses = 2;
  auto text = t->Translate({"Open the file. Where?"}, nbest, b);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("split_sentences"), std::string::npos);
  auto each = t->TranslateEach({"   "}, nbest, b);  // refused even when nothing would run
  EXPECT_EQ(each.status().code(), ErrorCode::kInvalidArgument);
  auto ids = tiny()->EncodeSource("Open the file.");
  ASSERT_TRUE(ids.ok());
  const TokenSpan span{ids->data(), ids->size()};
  const Status s = t->TranslateIdsEach(&span, 1, SearchOptions{}, b);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("split_sentences"), std::string::npos);
  auto bad = t->TranslateEach({"Fine. Caf\xE9."}, SearchOptions{}, b);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ((*bad)[0].status().code(), ErrorCode::kInvalidUtf8);
  EXPECT_NE((*bad)[0].status().message().find("texts[0]"), std::string::npos);
}

TEST_F(SplitSentencesTextTest, TheCApiSplitsAsTheCppApi) {
  const std::vector<std::string> lines = Paragraphs();
  auto t = Make(3, 4);
  ASSERT_NE(t, nullptr);
  BatchOptions b;
  b.split_sentences = true;
  auto want = t->Translate(lines, SearchOptions{}, b);
  ASSERT_TRUE(want.ok());

  hw_model* model = nullptr;
  ASSERT_EQ(hw_model_load((*dir_ / "tiny.hwm").c_str(), nullptr, &model), HW_OK);
  hw_translator_params tp = hw_translator_default_params();
  tp.max_batch = 3;
  tp.max_source_tokens = 48;
  tp.max_target_tokens = 16;
  tp.max_beam = 3;
  tp.sort_window = 4;
  hw_translator* tr = nullptr;
  ASSERT_EQ(hw_translator_create(model, &tp, &tr), HW_OK);
  std::vector<const char*> texts;
  for (const auto& l : lines) texts.push_back(l.c_str());
  hw_search_params sp = hw_search_default_params();
  hw_batch_params bp = hw_batch_default_params();
  bp.split_sentences = 1;
  hw_result* res = nullptr;
  ASSERT_EQ(hw_translate_each_batched(tr, texts.data(), nullptr, texts.size(), &sp, &bp, &res),
            HW_OK);
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ(hw_result_num_hypotheses(res, i), 1u);
    EXPECT_EQ(std::string(hw_result_text(res, i, 0)), (*want)[i][0].text) << "line " << i;
    EXPECT_EQ(hw_result_score(res, i, 0), (*want)[i][0].score) << "line " << i;
  }
  hw_result_free(res);
  sp.beam_size = 2;
  sp.num_hypotheses = 2;
  EXPECT_EQ(hw_translate_each_batched(tr, texts.data(), nullptr, texts.size(), &sp, &bp, &res),
            HW_ERR_INVALID_ARGUMENT);
  hw_translator_free(tr);
  hw_model_free(model);
}

}  // namespace
}  // namespace headwise
