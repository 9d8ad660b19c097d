#include "converter/src/vocab_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace headwise::convert {
namespace {

TEST(VocabReader, MapsIdsToPiecesAndFindsUnk) {
  auto r = ParseVocabJson(R"({"</s>":0,"<unk>":2,"\u2581a":1,"<pad>":3})", 4, "v.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pieces, (std::vector<std::string>{"</s>", "\xe2\x96\x81" "a", "<unk>", "<pad>"}));
  EXPECT_EQ(r->unk_id, 2);
}

struct BadVocab {
  const char* name;
  const char* text;
  const char* message;
};

class VocabRejects : public ::testing::TestWithParam<BadVocab> {};

TEST_P(VocabRejects, WithAClearMessage) {
  auto r = ParseVocabJson(GetParam().text, 3, "v.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(r.status().message().find(GetParam().message), std::string::npos)
      << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, VocabRejects,
    ::testing::Values(
        BadVocab{"TooFew", R"({"<unk>":0,"a":1})", "expected 3 pieces (config vocab_size), found 2"},
        BadVocab{"IdOutOfRange", R"({"<unk>":0,"a":1,"b":3})", "piece 'b': expected an id in [0, 3), found 3"},
        BadVocab{"IdNotInteger", R"({"<unk>":0,"a":1,"b":"2"})", "piece 'b': expected an id"},
        BadVocab{"SharedId", R"({"<unk>":0,"a":1,"b":1})", "id 1 is given to both 'a' and 'b'"},
        BadVocab{"NoUnk", R"({"x":0,"a":1,"b":2})", "expected a piece \"<unk>\""},
        BadVocab{"DuplicatePiece", R"({"<unk>":0,"a":1,"a":2})", "duplicate key 'a'"},
        BadVocab{"NotObject", R"(["<unk>","a","b"])", "expected a JSON object piece -> id"},
        BadVocab{"InvalidJson", R"({"<unk>":0,)", "invalid JSON"}),
    [](const ::testing::TestParamInfo<BadVocab>& param) { return param.param.name; });

}  // namespace
}  // namespace headwise::convert
