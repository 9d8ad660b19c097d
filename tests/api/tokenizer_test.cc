// Tokenizer: MarianTokenizer behaviour with tiny spm_train models, and the hostile-text rules
// documented in runtime/src/tokenizer.h.
#include "tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/api/test_model.h"

namespace headwise {
namespace {

using testing::kEos;
using testing::kUnk;
using testing::Spm;

constexpr size_t kNpos = std::string_view::npos;

class TokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir();
    ASSERT_FALSE(dir_->path().empty());
    auto en = testing::TrainSpm(dir_->path(), "en", 120);
    ASSERT_TRUE(en.ok()) << en.status().ToString();
    auto de = testing::TrainSpm(dir_->path(), "de", 120);
    ASSERT_TRUE(de.ok()) << de.status().ToString();
    en_ = new Spm(std::move(en).value());
    de_ = new Spm(std::move(de).value());
  }
  static void TearDownTestSuite() {
    delete en_;
    delete de_;
    delete dir_;
  }

  // A tokenizer with Marian's special ids for `vocab` ("<pad>" last).
  static std::unique_ptr<Tokenizer> Make(const Spm& source, const Spm& target,
                                         const std::vector<std::string>& vocab) {
    SpecialIds ids;
    ids.eos = kEos;
    ids.unk = kUnk;
    ids.pad = static_cast<int32_t>(vocab.size() - 1);
    auto t = Tokenizer::Create(source.proto, target.proto, vocab, ids);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }
  // Source "en", target "en": decoding what was encoded gives the text back.
  static std::unique_ptr<Tokenizer> RoundTrip() {
    return Make(*en_, *en_, testing::MarianVocab(*en_, *en_));
  }

  static std::vector<int32_t> Encode(const Tokenizer& t, const std::string& text) {
    auto r = t.EncodeSource(text);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : std::vector<int32_t>{};
  }

  static testing::ScratchDir* dir_;
  static Spm* en_;
  static Spm* de_;
};

testing::ScratchDir* TokenizerTest::dir_ = nullptr;
Spm* TokenizerTest::en_ = nullptr;
Spm* TokenizerTest::de_ = nullptr;

TEST_F(TokenizerTest, EncodeMapsPiecesThroughVocabAndAppendsEos) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  const std::vector<int32_t> ids = Encode(*t, "The cat sat on the mat.");
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids.back(), kEos);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), kEos), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), kUnk), 0);
  // The first piece starts a word: SentencePiece's "▁" marker, which the vocabulary maps.
  EXPECT_EQ(t->piece(ids[0]).rfind("\xE2\x96\x81", 0), 0u) << t->piece(ids[0]);
}

TEST_F(TokenizerTest, RoundTripGivesTheTextBack) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  for (const std::string& text : testing::Corpus("en")) {
    const std::vector<int32_t> ids = Encode(*t, text);
    auto back = t->DecodeTarget(ids.data(), ids.size());
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, text);
  }
}

TEST_F(TokenizerTest, UnknownCharactersMapToUnk) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  // Neither the emoji nor CJK appear in the training corpus.
  const std::vector<int32_t> ids = Encode(*t, "the \xF0\x9F\x98\x80 cat \xE6\xBC\xA2");
  EXPECT_GE(std::count(ids.begin(), ids.end(), kUnk), 2);
  EXPECT_EQ(ids.back(), kEos);
}

TEST_F(TokenizerTest, PiecesMissingFromTheVocabularyMapToUnk) {
  auto full = RoundTrip();
  ASSERT_TRUE(full);
  const std::vector<int32_t> ids = Encode(*full, "Open the file.");
  ASSERT_GE(ids.size(), 2u);
  const std::string dropped = full->piece(ids[0]);
  // Same SentencePiece model, but the vocabulary lacks the first piece of the sentence.
  std::vector<std::string> vocab = testing::MarianVocab(*en_, *en_);
  vocab.erase(std::find(vocab.begin(), vocab.end(), dropped));
  auto t = Make(*en_, *en_, vocab);
  ASSERT_TRUE(t);
  const std::vector<int32_t> reduced = Encode(*t, "Open the file.");
  ASSERT_EQ(reduced.size(), ids.size());
  EXPECT_EQ(reduced[0], kUnk);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (full->piece(ids[i]) == dropped) {
      EXPECT_EQ(reduced[i], kUnk) << i;
    } else {
      EXPECT_EQ(t->piece(reduced[i]), full->piece(ids[i])) << i;
    }
  }
}

TEST_F(TokenizerTest, SpecialTokensWrittenInTextAreText) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  const std::vector<int32_t> ids = Encode(*t, "the </s> cat <pad>");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), kEos), 1);
  EXPECT_EQ(ids.back(), kEos);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), static_cast<int32_t>(t->vocab_size() - 1)), 0);
}

TEST_F(TokenizerTest, EmptyAndBlankTextEncodeToEosOnly) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  const std::vector<std::string> blanks = {
      "",
      " ",
      "   \t  ",
      "\n\r\n",
      std::string("\0\x01\x1F\x7F", 4),
      "\xC2\x85\xC2\xA0",                      // NEL (C1), no-break space
      "\xE3\x80\x80\xE2\x80\x83\xE2\x80\xA8",  // ideographic space, em space, line separator
  };
  for (const std::string& text : blanks) {
    EXPECT_EQ(Encode(*t, text), std::vector<int32_t>{kEos}) << "text of " << text.size() << " bytes";
    EXPECT_TRUE(IsBlank(text));
  }
  EXPECT_FALSE(IsBlank(" a "));
  EXPECT_FALSE(IsBlank("\xE2\x80\x8B"));  // zero-width space is not White_Space
}

TEST_F(TokenizerTest, ControlCharactersCountAsSpaces) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  const std::vector<int32_t> spaced = Encode(*t, "the cat sat");
  EXPECT_EQ(Encode(*t, "the\tcat\nsat"), spaced);
  EXPECT_EQ(Encode(*t, std::string("the\x01" "cat\0sat", 11)), spaced);
  EXPECT_EQ(Encode(*t, "the\x7F" "cat\xC2\x9Bsat"), spaced);  // DEL, C1 CSI
  EXPECT_EQ(ControlsToSpaces(std::string("a\0b\x1B[1mc\xC2\x80", 10)), "a b [1mc ");
  // Not controls: ordinary non-ASCII text is untouched.
  EXPECT_EQ(ControlsToSpaces("\xC3\xA4\xE2\x82\xAC"), "\xC3\xA4\xE2\x82\xAC");
}

struct Utf8Case {
  const char* name;
  std::string text;
  size_t offset;  // npos: valid
};

TEST(Utf8Test, FindInvalidUtf8FollowsRfc3629) {
  const std::vector<Utf8Case> cases = {
      {"ascii", "hello", kNpos},
      {"empty", "", kNpos},
      {"nul", std::string("a\0b", 3), kNpos},
      {"two byte", "\xC3\xA4", kNpos},
      {"three byte", "\xE2\x82\xAC", kNpos},
      {"four byte", "\xF0\x9F\x98\x80", kNpos},
      {"last before surrogates", "\xED\x9F\xBF", kNpos},
      {"first after surrogates", "\xEE\x80\x80", kNpos},
      {"U+FFFF", "\xEF\xBF\xBF", kNpos},
      {"U+10FFFF", "\xF4\x8F\xBF\xBF", kNpos},
      {"stray continuation", "ab\x80", 2},
      {"lead C0", "\xC0\xAF", 0},
      {"lead C1", "x\xC1\xBF", 1},
      {"overlong three byte", "\xE0\x80\xAF", 0},
      {"overlong four byte", "\xF0\x8F\xBF\xBF", 0},
      {"surrogate high", "ok \xED\xA0\x80", 3},
      {"surrogate low", "\xED\xBF\xBF", 0},
      {"over U+10FFFF", "\xF4\x90\x80\x80", 0},
      {"lead F5", "\xF5\x80\x80\x80", 0},
      {"byte FF", "abc\xFF", 3},
      {"truncated two byte", "abc\xC3", 3},
      {"truncated three byte", "\xE2\x82", 0},
      {"truncated four byte", "x\xF0\x9F\x98", 1},
      {"bad continuation", "\xE2\x28\xA1", 0},
      {"second sequence bad", "\xC3\xA4\xC3", 2},
  };
  for (const Utf8Case& c : cases) EXPECT_EQ(FindInvalidUtf8(c.text), c.offset) << c.name;
}

TEST_F(TokenizerTest, InvalidUtf8IsRejectedWithItsOffset) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  auto r = t->EncodeSource("the cat \xED\xA0\x80 sat");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidUtf8);
  EXPECT_NE(r.status().message().find("byte offset 8"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("0xED"), std::string::npos) << r.status().message();
}

TEST_F(TokenizerTest, DecodeSkipsPadEosAndUnk) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  std::vector<int32_t> ids = Encode(*t, "Open the file.");
  ids.pop_back();  // EOS
  const auto pad = static_cast<int32_t>(t->vocab_size() - 1);
  std::vector<int32_t> noisy = {pad, kUnk};
  for (int32_t id : ids) {
    noisy.push_back(id);
    noisy.push_back(kUnk);
  }
  noisy.push_back(kEos);
  noisy.push_back(pad);
  auto clean = t->DecodeTarget(ids.data(), ids.size());
  auto with_specials = t->DecodeTarget(noisy.data(), noisy.size());
  ASSERT_TRUE(clean.ok() && with_specials.ok());
  EXPECT_EQ(*clean, "Open the file.");
  EXPECT_EQ(*with_specials, *clean);
  auto empty = t->DecodeTarget(nullptr, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST_F(TokenizerTest, DecodeUsesTheTargetModel) {
  // Source "en", target "de": German pieces decode through the German model.
  auto t = Make(*en_, *de_, testing::MarianVocab(*en_, *de_));
  ASSERT_TRUE(t);
  auto de_only = Make(*de_, *de_, testing::MarianVocab(*en_, *de_));
  ASSERT_TRUE(de_only);
  const std::vector<int32_t> ids = Encode(*de_only, "Die Katze saß auf der Matte.");
  auto text = t->DecodeTarget(ids.data(), ids.size());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "Die Katze saß auf der Matte.");
}

TEST_F(TokenizerTest, DecodeRejectsIdsOutsideTheVocabulary) {
  auto t = RoundTrip();
  ASSERT_TRUE(t);
  for (int32_t bad : {-1, static_cast<int32_t>(t->vocab_size())}) {
    const std::vector<int32_t> ids = {2, bad};
    auto r = t->DecodeTarget(ids.data(), ids.size());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("position 1"), std::string::npos) << r.status().message();
  }
}

TEST_F(TokenizerTest, DecodedTextIsAlwaysValidUtf8AndTrimmed) {
  // Vocabulary pieces the target model does not know are decoded verbatim (as MarianTokenizer
  // does): "▁" becomes a space, bytes that are not UTF-8 become U+FFFD.
  std::vector<std::string> vocab = testing::MarianVocab(*en_, *en_, {"\xE2\x96\x81zq", "x\xFF\xC3"});
  auto t = Make(*en_, *en_, vocab);
  ASSERT_TRUE(t);
  const auto find = [&](const std::string& p) {
    return static_cast<int32_t>(std::find(vocab.begin(), vocab.end(), p) - vocab.begin());
  };
  const std::vector<int32_t> ids = {find("\xE2\x96\x81zq"), find("x\xFF\xC3")};
  auto r = t->DecodeTarget(ids.data(), ids.size());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FindInvalidUtf8(*r), kNpos);
  EXPECT_EQ(*r, "zqx\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(TokenizerTest, ByteFallbackPiecesDecodeToValidUtf8) {
  auto bytes = testing::TrainSpm(dir_->path(), "de", 400, /*byte_fallback=*/true);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  std::vector<std::string> vocab = testing::MarianVocab(*bytes, *bytes);
  auto t = Make(*bytes, *bytes, vocab);
  ASSERT_TRUE(t);
  // An emoji the corpus never saw is encoded as four byte pieces and decoded back.
  const std::vector<int32_t> ids = Encode(*t, "Katze \xF0\x9F\x98\x80");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), kUnk), 0);
  auto back = t->DecodeTarget(ids.data(), ids.size());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "Katze \xF0\x9F\x98\x80");
  // A lone lead byte is not UTF-8 and comes out as U+FFFD.
  const auto lead = static_cast<int32_t>(std::find(vocab.begin(), vocab.end(), "<0xF0>") - vocab.begin());
  ASSERT_LT(static_cast<size_t>(lead), vocab.size());
  auto lone = t->DecodeTarget(&lead, 1);
  ASSERT_TRUE(lone.ok());
  EXPECT_EQ(FindInvalidUtf8(*lone), kNpos);
  EXPECT_EQ(*lone, "\xEF\xBF\xBD");
}

TEST_F(TokenizerTest, CreateRejectsBadInputs) {
  const std::vector<std::string> vocab = testing::MarianVocab(*en_, *de_);
  SpecialIds ids{static_cast<int32_t>(vocab.size() - 1), kEos, kUnk};

  auto garbage = Tokenizer::Create("not a model proto", de_->proto, vocab, ids);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), ErrorCode::kTokenizer);
  EXPECT_NE(garbage.status().message().find("source"), std::string::npos);
  EXPECT_NE(garbage.status().message().find("SentencePiece"), std::string::npos);

  auto bad_target = Tokenizer::Create(en_->proto, std::string("\x0a\xff\xff", 3), vocab, ids);
  ASSERT_FALSE(bad_target.ok());
  EXPECT_EQ(bad_target.status().code(), ErrorCode::kTokenizer);
  EXPECT_NE(bad_target.status().message().find("target"), std::string::npos);

  std::vector<std::string> dup = vocab;
  dup[3] = dup[2];
  auto duplicate = Tokenizer::Create(en_->proto, de_->proto, dup, ids);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.status().code(), ErrorCode::kTokenizer);
  EXPECT_NE(duplicate.status().message().find("ids 2 and 3"), std::string::npos)
      << duplicate.status().message();

  SpecialIds out_of_range = ids;
  out_of_range.pad = static_cast<int32_t>(vocab.size());
  auto special = Tokenizer::Create(en_->proto, de_->proto, vocab, out_of_range);
  ASSERT_FALSE(special.ok());
  EXPECT_EQ(special.status().code(), ErrorCode::kInvalidModel);
  EXPECT_NE(special.status().message().find("pad"), std::string::npos);
}

}  // namespace
}  // namespace headwise
