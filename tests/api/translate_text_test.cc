// The text path of the C++ API: Model::EncodeSource / DecodeTarget and Translator::Translate on
// a random-weight model with real (tiny) SentencePiece models: empty and blank lines, hostile
// text, limits, batch splitting and order, n-best.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "headwise/headwise.hpp"
#include "tests/api/standard_models_suite.h"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

using testing::kEos;

class TranslateTextTest : public testing::TinyModelSuite {
 protected:
  static std::unique_ptr<Translator> MakeTranslator(int max_batch = 4, int max_source = 64,
                                                    int max_target = 24, int max_beam = 4) {
    return MakeTiny(max_batch, max_source, max_target, max_beam);
  }
};

// Lines of varied lengths; what the model makes of them does not matter, only that each line's
// result is its own.
std::vector<std::string> VariedLines() {
  return {"Open the file.",
          "The cat sat on the mat.",
          "Thank you very much for your help!",
          "Where?",
          "This sentence is a little longer than the others in this small corpus.",
          "Press the button to continue.",
          "Numbers like 42 and 2024 appear in text too.",
          "My brother lives in a big city.",
          "It is late.",
          "Can you help me with my homework, please, before the shops are closed?",
          "Read."};
}

TEST_F(TranslateTextTest, EncodeSourceAndDecodeTargetUseTheEmbeddedTokenizer) {
  const Model& m = *tiny();
  auto ids = m.EncodeSource("The cat sat on the mat.");
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_GE(ids->size(), 2u);
  EXPECT_EQ(ids->back(), kEos);
  for (int32_t id : *ids) EXPECT_LT(id, m.info().vocab_size);
  auto empty = m.EncodeSource("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, std::vector<int32_t>{kEos});
  auto bad = m.EncodeSource("ok\xC3");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidUtf8);
  const int32_t eos = kEos;
  auto text = m.DecodeTarget(&eos, 1);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "");
}

TEST_F(TranslateTextTest, ModelWithoutTokenizerSaysSo) {
  auto m = Model::Load(*dir_ / "no_tokenizer.hwm");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto ids = (*m)->EncodeSource("hello");
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.status().code(), ErrorCode::kTokenizer);
  EXPECT_EQ(ids.status().message(), "model has no tokenizer");
  const int32_t one = 1;
  auto text = (*m)->DecodeTarget(&one, 1);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), ErrorCode::kTokenizer);

  TranslatorLimits limits;
  limits.max_source_tokens = 32;
  limits.max_target_tokens = 16;
  auto t = Translator::Create(*m, limits);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto out = (*t)->Translate({"hello"}, SearchOptions{});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kTokenizer);
}

TEST_F(TranslateTextTest, TranslateMatchesTheTokenPath) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  const std::string line = "Close the window and save the document.";
  auto out = t->Translate({line}, SearchOptions{});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 1u);
  ASSERT_EQ((*out)[0].size(), 1u);
  const TextHypothesis& h = (*out)[0][0];

  auto ids = tiny()->EncodeSource(line);
  ASSERT_TRUE(ids.ok());
  const TokenSpan span{ids->data(), ids->size()};
  ASSERT_TRUE(t->TranslateIds(&span, 1, SearchOptions{}).ok());
  const HypothesisView v = t->hypothesis(0, 0);
  EXPECT_EQ(h.ids, std::vector<int32_t>(v.ids, v.ids + v.size));
  EXPECT_EQ(h.score, v.score);
  EXPECT_EQ(h.finished, v.finished);
  auto text = tiny()->DecodeTarget(v.ids, v.size);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(h.text, *text);
}

TEST_F(TranslateTextTest, EmptyAndBlankLinesGiveAnEmptyTranslationWithoutRunningTheModel) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  // Leave a known result in the translator: a call that does not run the model keeps it.
  auto ids = tiny()->EncodeSource("Open the file.");
  ASSERT_TRUE(ids.ok());
  const TokenSpan span{ids->data(), ids->size()};
  ASSERT_TRUE(t->TranslateIds(&span, 1, SearchOptions{}).ok());
  const HypothesisView before = t->hypothesis(0, 0);
  const std::vector<int32_t> before_ids(before.ids, before.ids + before.size);

  SearchOptions beam;
  beam.beam_size = 3;
  beam.num_hypotheses = 3;
  const std::vector<std::string> blanks = {"", "   ", "\t\r\n", std::string("\0\x01", 2),
                                           "\xC2\xA0\xE3\x80\x80"};
  auto out = t->Translate(blanks, beam);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), blanks.size());
  for (const auto& hyps : *out) {
    ASSERT_EQ(hyps.size(), 1u);  // one empty hypothesis, whatever num_hypotheses asks for
    EXPECT_EQ(hyps[0].text, "");
    EXPECT_TRUE(hyps[0].ids.empty());
    EXPECT_EQ(hyps[0].score, 0.0f);
    EXPECT_TRUE(hyps[0].finished);
  }
  ASSERT_EQ(t->num_hypotheses(0), 1u);
  const HypothesisView after = t->hypothesis(0, 0);
  EXPECT_EQ(std::vector<int32_t>(after.ids, after.ids + after.size), before_ids);
  EXPECT_EQ(after.score, before.score);
}

TEST_F(TranslateTextTest, BlankLinesKeepTheirPlaceAmongOthers) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  auto out = t->Translate({"", "Open the file.", " ", "Read."}, SearchOptions{});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto alone1 = t->Translate({"Open the file."}, SearchOptions{});
  auto alone3 = t->Translate({"Read."}, SearchOptions{});
  ASSERT_TRUE(alone1.ok() && alone3.ok());
  EXPECT_EQ((*out)[0][0].text, "");
  EXPECT_EQ((*out)[1][0].ids, (*alone1)[0][0].ids);
  EXPECT_EQ((*out)[2][0].text, "");
  EXPECT_EQ((*out)[3][0].ids, (*alone3)[0][0].ids);
}

TEST_F(TranslateTextTest, InvalidUtf8FailsTheCallNamingLineAndOffset) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  auto out = t->Translate({"Open the file.", "caf\xC3\x28"}, SearchOptions{});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kInvalidUtf8);
  EXPECT_NE(out.status().message().find("texts[1]"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("byte offset 3"), std::string::npos)
      << out.status().message();
}

TEST_F(TranslateTextTest, ControlCharactersTranslateLikeSpaces) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  auto out = t->Translate({"Open\tthe\x01" "file.\x7F", "Open the file."}, SearchOptions{});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0][0].ids, (*out)[1][0].ids);
  EXPECT_EQ((*out)[0][0].text, (*out)[1][0].text);
}

TEST_F(TranslateTextTest, OverLongLineIsRejectedNotTruncated) {
  auto t = MakeTranslator(/*max_batch=*/4, /*max_source=*/12);
  ASSERT_TRUE(t);
  const std::string longest = "This sentence is a little longer than the others in this small corpus.";
  auto ids = tiny()->EncodeSource(longest);
  ASSERT_TRUE(ids.ok());
  ASSERT_GT(ids->size(), 12u);
  auto out = t->Translate({"Read.", longest}, SearchOptions{});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kInputTooLong);
  const std::string& msg = out.status().message();
  EXPECT_NE(msg.find("texts[1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(ids->size()) + " source tokens"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max_source_tokens 12"), std::string::npos) << msg;

  // Exactly at the limit is accepted.
  auto at_limit = MakeTranslator(4, static_cast<int>(ids->size()));
  ASSERT_TRUE(at_limit);
  EXPECT_TRUE(at_limit->Translate({longest}, SearchOptions{}).ok());
}

TEST_F(TranslateTextTest, BatchesOverTheLimitAreSplitAndOrderIsKept) {
  const std::vector<std::string> lines = VariedLines();
  auto one = MakeTranslator(/*max_batch=*/1);
  auto three = MakeTranslator(/*max_batch=*/3);
  ASSERT_TRUE(one && three);
  SearchOptions beam;
  beam.beam_size = 2;
  beam.num_hypotheses = 2;
  auto split = three->Translate(lines, beam);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  ASSERT_EQ(split->size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    auto alone = one->Translate({lines[i]}, beam);
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    ASSERT_EQ((*split)[i].size(), (*alone)[0].size()) << "line " << i;
    for (size_t k = 0; k < (*alone)[0].size(); ++k) {
      EXPECT_EQ((*split)[i][k].ids, (*alone)[0][k].ids) << "line " << i << " hypothesis " << k;
      EXPECT_EQ((*split)[i][k].text, (*alone)[0][k].text) << "line " << i;
      EXPECT_NEAR((*split)[i][k].score, (*alone)[0][k].score, 1e-4) << "line " << i;
    }
  }
  // The lines do not all translate alike, so a mix-up of positions could not go unnoticed.
  size_t distinct = 0;
  for (size_t i = 1; i < lines.size(); ++i) distinct += (*split)[i][0].ids != (*split)[0][0].ids;
  EXPECT_GT(distinct, 0u);
}

TEST_F(TranslateTextTest, NBestIsOrderedBestFirst) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  SearchOptions beam;
  beam.beam_size = 4;
  beam.num_hypotheses = 3;
  auto out = t->Translate({"The weather is nice today.", "Open the file."}, beam);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  for (const auto& hyps : *out) {
    ASSERT_EQ(hyps.size(), 3u);
    for (size_t k = 1; k < hyps.size(); ++k) EXPECT_GE(hyps[k - 1].score, hyps[k].score);
    for (const auto& h : hyps) EXPECT_TRUE(std::isfinite(h.score));
  }
}

TEST_F(TranslateTextTest, SearchOptionsOutsideTheLimitsAreRejected) {
  auto t = MakeTranslator(/*max_batch=*/4, /*max_source=*/64, /*max_target=*/24, /*max_beam=*/2);
  ASSERT_TRUE(t);
  struct Case {
    const char* name;
    SearchOptions options;
  };
  std::vector<Case> cases(6);
  cases[0] = {"beam over max_beam", {}};
  cases[0].options.beam_size = 3;
  cases[1] = {"beam zero", {}};
  cases[1].options.beam_size = 0;
  cases[2] = {"nbest over beam", {}};
  cases[2].options.beam_size = 2;
  cases[2].options.num_hypotheses = 3;
  cases[3] = {"max_length over max_target_tokens", {}};
  cases[3].options.max_length = 25;
  cases[4] = {"negative max_length", {}};
  cases[4].options.max_length = -1;
  cases[5] = {"length_penalty NaN", {}};
  cases[5].options.length_penalty = std::nanf("");
  for (const Case& c : cases) {
    // Also when no line needs the model: the answer does not depend on the text.
    for (const std::vector<std::string>& texts :
         {std::vector<std::string>{"Open the file."}, std::vector<std::string>{""}}) {
      auto out = t->Translate(texts, c.options);
      ASSERT_FALSE(out.ok()) << c.name;
      EXPECT_EQ(out.status().code(), ErrorCode::kInvalidArgument) << c.name;
      // One validation for both paths: the token-id path gives the same message.
      const int32_t eos[] = {kEos};
      const TokenSpan span{eos, 1};
      EXPECT_EQ(t->TranslateIds(&span, 1, c.options).message(), out.status().message()) << c.name;
    }
  }
  SearchOptions at_limit;
  at_limit.beam_size = 2;
  at_limit.num_hypotheses = 2;
  at_limit.max_length = 24;
  EXPECT_TRUE(t->Translate({"Open the file."}, at_limit).ok());
}

TEST_F(TranslateTextTest, EmptyCallGivesEmptyResult) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  auto out = t->Translate({}, SearchOptions{});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(out->empty());
}

TEST_F(TranslateTextTest, TranslationsAreValidUtf8) {
  auto t = MakeTranslator();
  ASSERT_TRUE(t);
  SearchOptions beam;
  beam.beam_size = 4;
  beam.num_hypotheses = 4;
  auto out = t->Translate(VariedLines(), beam);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  for (const auto& hyps : *out) {
    for (const auto& h : hyps) {
      auto back = tiny()->EncodeSource(h.text);  // rejects invalid UTF-8
      EXPECT_TRUE(back.ok()) << back.status().ToString();
    }
  }
}

TEST_F(TranslateTextTest, TranslatorsOnSeveralThreadsShareOneModel) {
  // The tokenizers live in the shared Model; each thread has its own Translator.
  const std::vector<std::string> lines = VariedLines();
  auto reference_translator = MakeTranslator();
  ASSERT_TRUE(reference_translator);
  auto reference = reference_translator->Translate(lines, SearchOptions{});
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();

  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<Translator>> translators;
  for (int i = 0; i < kThreads; ++i) {
    translators.push_back(MakeTranslator());
    ASSERT_TRUE(translators.back());
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int round = 0; round < 5; ++round) {
        auto out = translators[i]->Translate(lines, SearchOptions{});
        if (!out.ok()) {
          ++mismatches[i];
          continue;
        }
        for (size_t l = 0; l < lines.size(); ++l) {
          if ((*out)[l][0].text != (*reference)[l][0].text) ++mismatches[i];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(mismatches[i], 0) << "thread " << i;
}

}  // namespace
}  // namespace headwise
