// headwise::SplitSentences and hw_split_sentences: the sentence rule of `headwise-train data`
// (trainer/headwise_trainer/data/ui_text.py), case by case. The expected sentences are what
// that Python function returns for the same text; python/tests/test_sentences.py compares the
// two implementations over every character their tables decide and over the training text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"

namespace headwise {
namespace {

std::vector<std::string> Sentences(const std::string& text) {
  auto spans = SplitSentences(text);
  EXPECT_TRUE(spans.ok()) << spans.status().ToString();
  std::vector<std::string> out;
  if (!spans.ok()) return out;
  for (const SentenceSpan& s : *spans) {
    EXPECT_LT(s.begin, s.end);
    EXPECT_LE(s.end, text.size());
    out.push_back(text.substr(s.begin, s.end - s.begin));
  }
  return out;
}

using Lines = std::vector<std::string>;

TEST(SplitSentencesTest, BlankTextHasNoSentence) {
  EXPECT_EQ(Sentences(""), Lines{});
  EXPECT_EQ(Sentences("  \t "), Lines{});
  EXPECT_EQ(Sentences("Open the file."), Lines{"Open the file."});
  EXPECT_EQ(Sentences("  Open the file.  "), Lines{"Open the file."});
}

TEST(SplitSentencesTest, EndsAfterATerminatorBeforeACapitalOrDigit) {
  EXPECT_EQ(Sentences("Really?! Yes."), (Lines{"Really?!", "Yes."}));
  EXPECT_EQ(Sentences("Wait\u2026 Now."), (Lines{"Wait\u2026", "Now."}));
  EXPECT_EQ(Sentences("Done.\t\n Next one"), (Lines{"Done.", "Next one"}));
  EXPECT_EQ(Sentences("It costs 3.5 Euro. 4 left."), (Lines{"It costs 3.5 Euro.", "4 left."}));
  EXPECT_EQ(Sentences("\u00c7a va. \u00c9lan."), (Lines{"\u00c7a va.", "\u00c9lan."}));
  EXPECT_EQ(Sentences("A. B. Second sentence here. Third one."),
            (Lines{"A. B. Second sentence here.", "Third one."}));
  // Not before lower case, and not without whitespace.
  EXPECT_EQ(Sentences("lower. case"), Lines{"lower. case"});
  EXPECT_EQ(Sentences("One.Two. Three"), (Lines{"One.Two.", "Three"}));
}

TEST(SplitSentencesTest, QuotesAndBracketsStayWithTheirSentence) {
  EXPECT_EQ(Sentences("He said \"Stop.\" Then he left."),
            (Lines{"He said \"Stop.\"", "Then he left."}));
  EXPECT_EQ(Sentences("End.) (Next"), (Lines{"End.)", "(Next"}));
  EXPECT_EQ(Sentences("End.  \u201eQuoted\u201c next."), (Lines{"End.", "\u201eQuoted\u201c next."}));
  EXPECT_EQ(Sentences("Sie \u201eSpeichern\u201c. \u00abNext\u00bb"),
            (Lines{"Sie \u201eSpeichern\u201c.", "\u00abNext\u00bb"}));
  EXPECT_EQ(Sentences("See (Fig. 3). Next."), (Lines{"See (Fig. 3).", "Next."}));
}

TEST(SplitSentencesTest, NoBoundaryAfterAbbreviationsLettersAndNumbers) {
  EXPECT_EQ(Sentences("Use e.g. this. Then z. B. that. Version 2. Done."),
            (Lines{"Use e.g. this.", "Then z. B. that.", "Version 2. Done."}));
  EXPECT_EQ(Sentences("Mr. Smith. \u00dcber alles."), (Lines{"Mr. Smith.", "\u00dcber alles."}));
  EXPECT_EQ(Sentences("Etc. Next"), Lines{"Etc. Next"});          // lower-cased: "etc"
  EXPECT_EQ(Sentences("INKL. Next"), Lines{"INKL. Next"});
  EXPECT_EQ(Sentences("IN\u212aL. Next"), Lines{"IN\u212aL. Next"});  // KELVIN SIGN lowers to k
  EXPECT_EQ(Sentences("U.\u00c4. Next"), Lines{"U.\u00c4. Next"});     // "u.ä"
  EXPECT_EQ(Sentences("5. Next"), Lines{"5. Next"});
  EXPECT_EQ(Sentences("x\u00b2. Next"), Lines{"x\u00b2. Next"});      // a superscript digit
  // U+0130 lowers to two characters, so "İ" is no one-letter word.
  EXPECT_EQ(Sentences("\u0130. Next"), (Lines{"\u0130.", "Next"}));
}

TEST(SplitSentencesTest, WhitespaceIsPythonsIsspace) {
  EXPECT_EQ(Sentences("End.\u00a0Next"), (Lines{"End.", "Next"}));
  EXPECT_EQ(Sentences("He left.\u3000Next"), (Lines{"He left.", "Next"}));
  EXPECT_EQ(Sentences("He left.\u200bNext"), Lines{"He left.\u200bNext"});  // ZWSP is no space
}

TEST(SplitSentencesTest, SpansAreByteOffsets) {
  const std::string text = "\u00dcber. \u00c9t\u00e9 l\u00e0.";
  auto spans = SplitSentences(text);
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ((*spans)[0].begin, 0u);
  EXPECT_EQ((*spans)[0].end, 6u);    // "Über." is 6 bytes
  EXPECT_EQ((*spans)[1].begin, 7u);
  EXPECT_EQ((*spans)[1].end, text.size());
}

TEST(SplitSentencesTest, InvalidUtf8IsAnError) {
  auto spans = SplitSentences("Fine. Caf\xE9 au lait.");
  ASSERT_FALSE(spans.ok());
  EXPECT_EQ(spans.status().code(), ErrorCode::kInvalidUtf8);
  EXPECT_NE(spans.status().message().find("byte offset 9"), std::string::npos)
      << spans.status().message();
}

TEST(SplitSentencesTest, TheCApiWritesTheSameSpans) {
  const std::string text = "Open it. Then close it! Done.";
  size_t count = 99;
  ASSERT_EQ(hw_split_sentences(text.data(), text.size(), nullptr, 0, &count), HW_OK);
  EXPECT_EQ(count, 3u);
  size_t spans[4] = {0, 0, 0, 0};
  ASSERT_EQ(hw_split_sentences(text.data(), text.size(), spans, 2, &count), HW_OK);
  EXPECT_EQ(count, 3u);  // the whole count, two written
  EXPECT_EQ(text.substr(spans[0], spans[1] - spans[0]), "Open it.");
  EXPECT_EQ(text.substr(spans[2], spans[3] - spans[2]), "Then close it!");
  EXPECT_EQ(hw_split_sentences(nullptr, 0, nullptr, 0, &count), HW_OK);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(hw_split_sentences("x\xFF", 2, spans, 2, &count), HW_ERR_INVALID_UTF8);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(hw_split_sentences(nullptr, 3, spans, 2, &count), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_split_sentences(text.data(), text.size(), nullptr, 2, &count),
            HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_split_sentences(text.data(), text.size(), spans, 2, nullptr),
            HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_batch_default_params().split_sentences, 0);
}

}  // namespace
}  // namespace headwise
