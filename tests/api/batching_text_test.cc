// Length-sorted batching on the text path and through the C API: Translate / TranslateEach
// with BatchOptions (sort windows smaller than the input, line and token budgets, input order)
// give every line what a batch-1 translator gives it, in input order, with blank, invalid and
// over-long lines mixed in; the observer names lines by their index into the texts; and
// hw_translate_each_batched / hw_translate_ids_each give the C++ results exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/standard_models_suite.h"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

class BatchingTextTest : public testing::TinyModelSuite {
 protected:
  static std::unique_ptr<Translator> Make(int max_batch, int sort_window) {
    return MakeTiny(max_batch, 48, 16, 3, sort_window);
  }
};

// Short and long lines shuffled together, with a blank, an invalid UTF-8 and an over-long line.
std::vector<std::string> ShuffledMix() {
  std::vector<std::string> lines = {
      "Open the file.", "Where?", "The cat sat on the mat.", "Read.",
      "Thank you very much for your help!", "It is late.",
      "Press the button to continue, then wait for the window.", "Save",
      "My brother lives in a big city near the sea.", "Close the window.", "Yes",
      "Numbers like 42 and 2024 appear in text too."};
  std::mt19937 rng(5);
  std::shuffle(lines.begin(), lines.end(), rng);
  std::string too_long;
  for (int i = 0; i < 60; ++i) too_long += "cat ";
  lines.insert(lines.begin() + 2, "   ");
  lines.insert(lines.begin() + 6, "caf\xE9 au lait");
  lines.insert(lines.begin() + 9, too_long);
  return lines;
}

class Recorder final : public BatchObserver {
 public:
  void OnBatch(const BatchReport& b) override {
    batches.emplace_back(b.lines, b.lines + b.num_lines);
    longest.push_back(b.longest_source);
  }
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> longest;
};

void ExpectSameLines(const std::vector<Result<std::vector<TextHypothesis>>>& got,
                     const std::vector<Result<std::vector<TextHypothesis>>>& want, float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].ok(), want[i].ok()) << "line " << i;
    if (!want[i].ok()) {
      EXPECT_EQ(got[i].status().code(), want[i].status().code()) << "line " << i;
      EXPECT_EQ(got[i].status().message(), want[i].status().message()) << "line " << i;
      continue;
    }
    ASSERT_EQ(got[i]->size(), want[i]->size()) << "line " << i;
    for (size_t k = 0; k < want[i]->size(); ++k) {
      EXPECT_EQ((*got[i])[k].ids, (*want[i])[k].ids) << "line " << i << " k " << k;
      EXPECT_EQ((*got[i])[k].text, (*want[i])[k].text) << "line " << i;
      EXPECT_NEAR((*got[i])[k].score, (*want[i])[k].score, tolerance) << "line " << i;
      EXPECT_EQ((*got[i])[k].finished, (*want[i])[k].finished) << "line " << i;
    }
  }
}

TEST_F(BatchingTextTest, ShuffledMixGivesBatchOneResultsInInputOrder) {
  const std::vector<std::string> lines = ShuffledMix();
  auto one = Make(1, 1);
  ASSERT_NE(one, nullptr);
  struct Case {
    int window, max_lines, max_tokens;
    bool sort;
  };
  // A window smaller than the input, the whole input, a token budget, input order.
  const Case cases[] = {{5, 0, 0, true}, {64, 0, 0, true}, {64, 2, 24, true}, {7, 3, 0, false}};
  for (int beam : {1, 3}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam == 1 ? 1 : 2;
    auto want = one->TranslateEach(lines, so);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    EXPECT_EQ((*want)[6].status().code(), ErrorCode::kInvalidUtf8);
    EXPECT_EQ((*want)[9].status().code(), ErrorCode::kInputTooLong);
    EXPECT_EQ((*want)[2]->front().text, "");  // the blank line
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i != 6 && i != 9) {
        ASSERT_TRUE((*want)[i].ok()) << i << ": " << (*want)[i].status().ToString();
      }
    }
    size_t distinct = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      distinct += (*want)[i].ok() && (*want)[i]->front().ids != (*want)[0]->front().ids;
    }
    ASSERT_GT(distinct, 3u) << "the lines translate alike: a mix-up could go unnoticed";

    for (const Case& c : cases) {
      SCOPED_TRACE("beam " + std::to_string(beam) + " window " + std::to_string(c.window) +
                   " lines " + std::to_string(c.max_lines) + " tokens " +
                   std::to_string(c.max_tokens) + (c.sort ? " sorted" : " input order"));
      auto many = Make(3, c.window);
      ASSERT_NE(many, nullptr);
      BatchOptions b;
      b.max_lines = c.max_lines;
      b.max_tokens = c.max_tokens;
      b.sort_by_length = c.sort;
      Recorder seen;
      b.observer = &seen;
      auto got = many->TranslateEach(lines, so, b);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ExpectSameLines(*got, *want, 1e-4f);

      // Every translated line in exactly one batch, named by its index into `lines`; blank and
      // failing lines in none; no batch spans two windows.
      std::vector<int> times(lines.size(), 0);
      for (size_t b2 = 0; b2 < seen.batches.size(); ++b2) {
        const auto& batch = seen.batches[b2];
        EXPECT_LE(batch.size(), static_cast<size_t>(c.max_lines > 0 ? c.max_lines : 3));
        size_t longest = 0;
        for (size_t line : batch) {
          ASSERT_LT(line, lines.size());
          ++times[line];
          EXPECT_EQ(line / static_cast<size_t>(c.window), batch[0] / static_cast<size_t>(c.window));
          longest = std::max(longest, tiny()->EncodeSource(lines[line])->size());
        }
        EXPECT_EQ(seen.longest[b2], longest);
        if (c.max_tokens > 0 && batch.size() > 1) {
          EXPECT_LE(batch.size() * longest, static_cast<size_t>(c.max_tokens));
        }
      }
      for (size_t i = 0; i < lines.size(); ++i) {
        const bool runs = (*want)[i].ok() && i != 2;
        EXPECT_EQ(times[i], runs ? 1 : 0) << "line " << i;
      }
    }
  }
}

TEST_F(BatchingTextTest, TranslateTakesTheSameBatching) {
  std::vector<std::string> lines = ShuffledMix();
  lines.erase(lines.begin() + 9);  // the over-long line
  lines.erase(lines.begin() + 6);  // the invalid one: Translate fails on any bad line
  auto one = Make(1, 1);
  auto many = Make(3, 4);
  ASSERT_TRUE(one && many);
  BatchOptions b;
  b.max_tokens = 20;
  auto want = one->Translate(lines, SearchOptions{});
  auto got = many->Translate(lines, SearchOptions{}, b);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ((*got)[i].size(), 1u);
    EXPECT_EQ((*got)[i][0].ids, (*want)[i][0].ids) << i;
    EXPECT_EQ((*got)[i][0].text, (*want)[i][0].text) << i;
  }
  BatchOptions bad;
  bad.max_lines = 4;  // max_batch 3
  EXPECT_EQ(many->Translate(lines, SearchOptions{}, bad).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(many->TranslateEach(lines, SearchOptions{}, bad).status().code(),
            ErrorCode::kInvalidArgument);
  bad.max_lines = 0;
  bad.max_tokens = -1;
  EXPECT_EQ(many->TranslateEach({"   "}, SearchOptions{}, bad).status().code(),
            ErrorCode::kInvalidArgument);  // checked even when no line runs the model
}

TEST_F(BatchingTextTest, TheCApiBatchesAsTheCppApi) {
  const std::vector<std::string> lines = ShuffledMix();
  auto cpp = Make(3, 6);
  ASSERT_NE(cpp, nullptr);
  hw_model* model = nullptr;
  ASSERT_EQ(hw_model_load((*dir_ / "tiny.hwm").c_str(), nullptr, &model), HW_OK);
  hw_translator_params tp = hw_translator_default_params();
  EXPECT_EQ(tp.sort_window, 0);
  tp.max_batch = 3;
  tp.max_source_tokens = 48;
  tp.max_target_tokens = 16;
  tp.max_beam = 3;
  tp.sort_window = 6;
  hw_translator* t = nullptr;
  ASSERT_EQ(hw_translator_create(model, &tp, &t), HW_OK) << hw_last_error_message();
  EXPECT_EQ(hw_translator_sort_window(t), 6);

  hw_batch_params bp = hw_batch_default_params();
  EXPECT_EQ(bp.max_lines, 0);
  EXPECT_EQ(bp.max_tokens, 0);
  EXPECT_EQ(bp.sort_by_length, 1);
  bp.max_tokens = 30;
  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 3;
  sp.num_hypotheses = 2;
  SearchOptions so;
  so.beam_size = 3;
  so.num_hypotheses = 2;
  BatchOptions b;
  b.max_tokens = 30;

  std::vector<const char*> texts;
  for (const std::string& l : lines) texts.push_back(l.c_str());
  hw_result* r = nullptr;
  ASSERT_EQ(hw_translate_each_batched(t, texts.data(), nullptr, texts.size(), &sp, &bp, &r), HW_OK)
      << hw_last_error_message();
  auto want = cpp->TranslateEach(lines, so, b);
  ASSERT_TRUE(want.ok());
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& w = (*want)[i];
    ASSERT_EQ(static_cast<int>(hw_result_status(r, i)), static_cast<int>(w.status().code())) << i;
    if (!w.ok()) {
      EXPECT_EQ(hw_result_error_message(r, i), w.status().message());
      continue;
    }
    ASSERT_EQ(hw_result_num_hypotheses(r, i), w->size());
    for (size_t k = 0; k < w->size(); ++k) {
      hw_hypothesis h;
      ASSERT_EQ(hw_result_get_hypothesis(r, i, k, &h), HW_OK);
      EXPECT_STREQ(h.text, (*w)[k].text.c_str());
      EXPECT_EQ(h.score, (*w)[k].score);  // the same batches: bit for bit
    }
  }
  hw_result_free(r);
  bp.max_lines = 4;  // over max_batch
  EXPECT_EQ(hw_translate_each_batched(t, texts.data(), nullptr, texts.size(), &sp, &bp, &r),
            HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r, nullptr);
  bp.max_lines = 0;

  // The token path: the first six lines' ids (the blank one is [EOS], which the ids path
  // translates), plus an empty source that fails alone.
  std::vector<std::vector<int32_t>> sources;
  for (size_t i = 0; i < 5; ++i) sources.push_back(*tiny()->EncodeSource(lines[i]));
  sources.emplace_back();
  std::vector<const int32_t*> ids;
  std::vector<size_t> lengths;
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) {
    ids.push_back(s.data());
    lengths.push_back(s.size());
    spans.push_back({s.data(), s.size()});
  }
  ASSERT_EQ(hw_translate_ids_each(t, ids.data(), lengths.data(), ids.size(), &sp, &bp), HW_OK)
      << hw_last_error_message();
  ASSERT_TRUE(cpp->TranslateIdsEach(spans.data(), spans.size(), so, b).ok());
  for (size_t i = 0; i < sources.size(); ++i) {
    EXPECT_EQ(static_cast<int>(hw_translator_line_status(t, i)),
              static_cast<int>(cpp->line_status(i).code())) << i;
    EXPECT_EQ(hw_translator_line_error_message(t, i), cpp->line_status(i).message()) << i;
    ASSERT_EQ(hw_translator_num_hypotheses(t, i), cpp->num_hypotheses(i)) << i;
    for (size_t k = 0; k < cpp->num_hypotheses(i); ++k) {
      hw_hypothesis h;
      ASSERT_EQ(hw_translator_get_hypothesis(t, i, k, &h), HW_OK);
      const HypothesisView v = cpp->hypothesis(i, k);
      EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.length), std::vector<int32_t>(v.ids, v.ids + v.size));
      EXPECT_EQ(h.score, v.score);
    }
  }
  EXPECT_EQ(hw_translator_line_status(t, 5), HW_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(hw_translator_line_error_message(t, 5), "source is empty (it must end with EOS)");
  EXPECT_EQ(hw_translator_line_status(t, 99), HW_OK);  // out of range

  std::vector<const int32_t*> seven(7, ids[0]);
  std::vector<size_t> seven_lengths(7, lengths[0]);
  EXPECT_EQ(hw_translate_ids_each(t, seven.data(), seven_lengths.data(), 7, &sp, &bp),
            HW_ERR_BATCH_TOO_LARGE);
  EXPECT_EQ(hw_translator_num_hypotheses(t, 0), 0u);  // a failed call leaves no results
  EXPECT_EQ(hw_translate_ids_each(nullptr, ids.data(), lengths.data(), 1, &sp, &bp),
            HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translate_ids_each(t, nullptr, lengths.data(), 1, &sp, &bp), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_translator_sort_window(nullptr), 0);
  hw_translator_free(t);
  hw_model_free(model);
}

}  // namespace
}  // namespace headwise
