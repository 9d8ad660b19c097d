// Target prefixes on the text path and in the C API: a line's prefix text is encoded by
// Model::EncodeTarget and the translation is the token-id path's with those ids (hypotheses
// begin with them and their text is their decoding); blank prefixes change nothing; the
// refusals (count, split_sentences, a blank line with a prefix) and each line's own prefix
// errors; the C API functions give what the C++ API gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/standard_models_suite.h"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

const std::vector<std::string>& Lines() {
  static const std::vector<std::string> lines = {"Open the file.", "The cat sat on the mat.",
                                                 "Where?", "Thank you very much for your help!"};
  return lines;
}

class TargetPrefixTextTest : public testing::TinyModelSuite {
 protected:
  static std::unique_ptr<Translator> Make() { return MakeTiny(4, 48, 16, 3); }
  static std::vector<std::string> Prefixes(Translator& t);
};

// Prefixes made of the first pieces of another line's greedy translation, decoded (so their
// pieces are the vocabulary's), and none for line 2.
std::vector<std::string> TargetPrefixTextTest::Prefixes(Translator& t) {
  auto plain = t.Translate(Lines(), SearchOptions{});
  EXPECT_TRUE(plain.ok()) << plain.status().ToString();
  std::vector<std::string> out;
  for (size_t i = 0; i < Lines().size(); ++i) {
    const std::vector<int32_t>& ids = (*plain)[(i + 1) % Lines().size()][0].ids;
    auto text = tiny()->DecodeTarget(ids.data(), std::min<size_t>(ids.size(), 1 + i));
    EXPECT_TRUE(text.ok());
    out.push_back(*text);
  }
  out[2] = "";  // no prefix for this line
  return out;
}

TEST_F(TargetPrefixTextTest, TheTextPathIsTheIdPathWithTheEncodedPrefix) {
  auto t = Make();
  ASSERT_NE(t, nullptr);
  const std::vector<std::string> prefixes = Prefixes(*t);
  for (int beam : {1, 3}) {
    SCOPED_TRACE("beam " + std::to_string(beam));
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam;
    auto got = t->Translate(Lines(), so, {}, prefixes);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    for (size_t i = 0; i < Lines().size(); ++i) {
      SCOPED_TRACE("line " + std::to_string(i));
      auto src = tiny()->EncodeSource(Lines()[i]);
      auto prefix = tiny()->EncodeTarget(prefixes[i]);
      ASSERT_TRUE(src.ok() && prefix.ok());
      EXPECT_EQ(prefix->empty(), prefixes[i].empty());
      const TokenSpan s{src->data(), src->size()}, p{prefix->data(), prefix->size()};
      ASSERT_TRUE(t->TranslateIds(&s, 1, so, &p).ok());
      ASSERT_EQ((*got)[i].size(), t->num_hypotheses(0));
      for (size_t k = 0; k < (*got)[i].size(); ++k) {
        const TextHypothesis& h = (*got)[i][k];
        const HypothesisView v = t->hypothesis(0, k);
        EXPECT_EQ(h.ids, std::vector<int32_t>(v.ids, v.ids + v.size));
        EXPECT_EQ(h.score, v.score);
        ASSERT_GE(h.ids.size(), prefix->size());
        EXPECT_TRUE(std::equal(prefix->begin(), prefix->end(), h.ids.begin()));
        auto text = tiny()->DecodeTarget(h.ids.data(), h.ids.size());
        ASSERT_TRUE(text.ok());
        EXPECT_EQ(h.text, *text);
      }
    }
  }
}

TEST_F(TargetPrefixTextTest, BlankPrefixesChangeNothing) {
  auto t = Make();
  ASSERT_NE(t, nullptr);
  SearchOptions so;
  so.beam_size = 3;
  auto plain = t->Translate(Lines(), so);
  auto blank = t->Translate(Lines(), so, {}, std::vector<std::string>(Lines().size(), " "));
  ASSERT_TRUE(plain.ok() && blank.ok());
  for (size_t i = 0; i < Lines().size(); ++i) {
    ASSERT_EQ((*plain)[i].size(), (*blank)[i].size());
    for (size_t k = 0; k < (*plain)[i].size(); ++k) {
      EXPECT_EQ((*plain)[i][k].ids, (*blank)[i][k].ids);
      EXPECT_EQ((*plain)[i][k].score, (*blank)[i][k].score);
    }
  }
}

TEST_F(TargetPrefixTextTest, RefusalsOfTheWholeCall) {
  auto t = Make();
  ASSERT_NE(t, nullptr);
  const SearchOptions so;
  auto count = t->Translate(Lines(), so, {}, {"a"});
  EXPECT_EQ(count.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(count.status().message(),
            "target_prefixes holds 1 texts for 4 lines (one per line, or none)");
  BatchOptions split;
  split.split_sentences = true;
  auto each = t->TranslateEach(Lines(), so, split, std::vector<std::string>(4, ""));
  EXPECT_EQ(each.status().code(), ErrorCode::kInvalidArgument);
}

// Each line's prefix errors are its own in TranslateEach, and fail Translate naming the line.
TEST_F(TargetPrefixTextTest, EachLineFailsAloneOnItsPrefix) {
  auto t = Make();
  ASSERT_NE(t, nullptr);
  const std::vector<std::string> texts = {"Open the file.", "Where?", "   ", "Close it."};
  const std::string too_long(400, 'a');  // more pieces than max_target_tokens 16
  const std::vector<std::string> prefixes = {"", "x\xFFy", "ok", too_long};
  const SearchOptions so;
  auto out = t->TranslateEach(texts, so, {}, prefixes);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)[0].ok());
  EXPECT_EQ((*out)[1].status().code(), ErrorCode::kInvalidUtf8);
  EXPECT_EQ((*out)[1].status().message().rfind("target_prefixes[1]: ", 0), 0u)
      << (*out)[1].status().message();
  EXPECT_EQ((*out)[2].status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ((*out)[2].status().message(),
            "texts[2]: the line is blank but its target prefix is not (there is nothing to "
            "translate after it)");
  EXPECT_EQ((*out)[3].status().code(), ErrorCode::kInputTooLong);
  EXPECT_EQ((*out)[3].status().message().rfind("texts[3]: target prefix of ", 0), 0u)
      << (*out)[3].status().message();
  auto alone = t->Translate({texts[0]}, so);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ((*out)[0]->at(0).ids, (*alone)[0][0].ids);
  auto whole = t->Translate(texts, so, {}, prefixes);
  EXPECT_EQ(whole.status().code(), ErrorCode::kInvalidUtf8);
}

TEST_F(TargetPrefixTextTest, TheCApiGivesWhatTheCppApiGives) {
  auto t = Make();
  ASSERT_NE(t, nullptr);
  const std::vector<std::string> prefixes = Prefixes(*t);
  hw_model* model = nullptr;
  ASSERT_EQ(hw_model_load((*dir_ / "tiny.hwm").c_str(), nullptr, &model), HW_OK);
  hw_translator_params tp = hw_translator_default_params();
  tp.max_batch = 4;
  tp.max_source_tokens = 48;
  tp.max_target_tokens = 16;
  tp.max_beam = 3;
  hw_translator* tr = nullptr;
  ASSERT_EQ(hw_translator_create(model, &tp, &tr), HW_OK) << hw_last_error_message();
  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 3;
  sp.num_hypotheses = 2;
  SearchOptions so;
  so.beam_size = 3;
  so.num_hypotheses = 2;

  // hw_model_encode_target
  size_t n = 0;
  ASSERT_EQ(hw_model_encode_target(model, prefixes[1].data(), prefixes[1].size(), nullptr, 0, &n),
            HW_OK);
  std::vector<int32_t> ids(n);
  ASSERT_EQ(hw_model_encode_target(model, prefixes[1].data(), prefixes[1].size(), ids.data(), n,
                                   &n),
            HW_OK);
  EXPECT_EQ(ids, *tiny()->EncodeTarget(prefixes[1]));
  EXPECT_EQ(hw_model_encode_target(model, "x\xFF", 2, nullptr, 0, &n), HW_ERR_INVALID_UTF8);

  // hw_translate_each_prefixed (a NULL prefix is none)
  std::vector<const char*> texts, pre;
  for (size_t i = 0; i < Lines().size(); ++i) {
    texts.push_back(Lines()[i].c_str());
    pre.push_back(prefixes[i].empty() ? nullptr : prefixes[i].c_str());
  }
  hw_result* result = nullptr;
  ASSERT_EQ(hw_translate_each_prefixed(tr, texts.data(), nullptr, texts.size(), pre.data(), nullptr,
                                       &sp, nullptr, &result),
            HW_OK)
      << hw_last_error_message();
  auto want = t->Translate(Lines(), so, {}, prefixes);
  ASSERT_TRUE(want.ok());
  for (size_t i = 0; i < Lines().size(); ++i) {
    ASSERT_EQ(hw_result_num_hypotheses(result, i), (*want)[i].size());
    for (size_t k = 0; k < (*want)[i].size(); ++k) {
      EXPECT_EQ(std::string(hw_result_text(result, i, k)), (*want)[i][k].text);
      EXPECT_EQ(hw_result_score(result, i, k), (*want)[i][k].score);
    }
  }
  hw_result_free(result);

  // hw_translate_ids_prefixed and hw_translate_ids_each_prefixed
  std::vector<std::vector<int32_t>> src, pid;
  for (size_t i = 0; i < Lines().size(); ++i) {
    src.push_back(*tiny()->EncodeSource(Lines()[i]));
    pid.push_back(*tiny()->EncodeTarget(prefixes[i]));
  }
  std::vector<const int32_t*> sp_ids, pp_ids;
  std::vector<size_t> s_len, p_len;
  for (size_t i = 0; i < src.size(); ++i) {
    sp_ids.push_back(src[i].data());
    s_len.push_back(src[i].size());
    pp_ids.push_back(pid[i].data());
    p_len.push_back(pid[i].size());
  }
  for (int each = 0; each < 2; ++each) {
    const hw_status st =
        each ? hw_translate_ids_each_prefixed(tr, sp_ids.data(), s_len.data(), src.size(),
                                              pp_ids.data(), p_len.data(), &sp, nullptr)
             : hw_translate_ids_prefixed(tr, sp_ids.data(), s_len.data(), src.size(),
                                         pp_ids.data(), p_len.data(), &sp);
    ASSERT_EQ(st, HW_OK) << hw_last_error_message();
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_EQ(hw_translator_num_hypotheses(tr, i), (*want)[i].size());
      hw_hypothesis h;
      ASSERT_EQ(hw_translator_get_hypothesis(tr, i, 0, &h), HW_OK);
      EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.length), (*want)[i][0].ids);
      EXPECT_EQ(h.score, (*want)[i][0].score);
    }
  }
  // One of the two prefix arrays NULL; an EOS inside a prefix.
  EXPECT_EQ(hw_translate_ids_prefixed(tr, sp_ids.data(), s_len.data(), 1, pp_ids.data(), nullptr,
                                      &sp),
            HW_ERR_INVALID_ARGUMENT);
  const int32_t eos = tiny()->info().eos_token_id;
  const int32_t* eos_prefix[1] = {&eos};
  const size_t one[1] = {1};
  EXPECT_EQ(hw_translate_ids_prefixed(tr, sp_ids.data(), s_len.data(), 1, eos_prefix, one, &sp),
            HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hw_last_error_message()).find("is EOS"), std::string::npos);
  ASSERT_EQ(hw_translate_ids_each_prefixed(tr, sp_ids.data(), s_len.data(), 1, eos_prefix, one,
                                           &sp, nullptr),
            HW_OK);
  EXPECT_EQ(hw_translator_line_status(tr, 0), HW_ERR_INVALID_ARGUMENT);
  hw_translator_free(tr);
  hw_model_free(model);
}

}  // namespace
}  // namespace headwise
