// The vocabulary shortlist on the writing side: its rules (format/shortlist.h CheckShortlist),
// the union helpers, the writer and ShortlistFromSchema round trip, the shortlist file reader
// (converter/src/shortlist_reader.h) with every error naming the line, and `headwise-convert
// --shortlist` end to end with inspect (JSON and text).
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "converter/src/cli.h"
#include "converter/src/convert.h"
#include "converter/src/inspect.h"
#include "converter/src/shortlist_reader.h"
#include "format/model_writer.h"
#include "format/schema_map.h"
#include "format/shortlist.h"
#include "headwise_generated.h"
#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/spec_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

// vocab 6: frequent {0, 4}; lists: 1 -> {2, 5}, 3 -> {1}, others empty.
ShortlistSpec Small() {
  ShortlistSpec s;
  s.frequent = {0, 4};
  s.offsets = {0, 0, 2, 2, 3, 3, 3};
  s.targets = {2, 5, 1};
  s.description = "small";
  return s;
}

void ExpectRejected(const ShortlistSpec& s, uint32_t vocab, const std::string& fragment) {
  auto r = CheckShortlist(ViewOf(s, vocab), ErrorCode::kInvalidModel);
  ASSERT_FALSE(r.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidModel);
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().ToString();
}

TEST(ShortlistRules, AValidShortlistAndItsStatistics) {
  auto r = CheckShortlist(ViewOf(Small(), 6), ErrorCode::kInvalidModel);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sources, 2u);
  EXPECT_EQ(r->longest, 2u);
}

TEST(ShortlistRules, EveryBrokenRuleIsNamed) {
  ShortlistSpec s = Small();
  ExpectRejected(s, 7, "offsets: expected 8 entries (vocab_size + 1), found 7");
  ExpectRejected(s, 0, "the vocabulary is empty");
  s.offsets[0] = 1;
  ExpectRejected(s, 6, "offsets[0] must be 0, found 1");
  s = Small();
  s.offsets[6] = 2;
  ExpectRejected(s, 6, "offsets[6] is 2, expected the 3 targets");
  s = Small();
  s.offsets = {0, 0, 9, 2, 3, 3, 3};  // past the targets before the last offset is reached
  ExpectRejected(s, 6, "offsets[2] is 9, past the 3 targets");
  s = Small();
  s.offsets = {0, 2, 1, 2, 3, 3, 3};
  ExpectRejected(s, 6, "offsets must not decrease, found 2 then 1 at source id 1");
  s = Small();
  s.targets = {5, 2, 1};
  ExpectRejected(s, 6, "list of source id 1: ids must be ascending and unique, found 5 then 2 at position 1");
  s.targets = {2, 2, 1};
  ExpectRejected(s, 6, "list of source id 1: ids must be ascending and unique, found 2 then 2");
  s.targets = {2, 6, 1};
  ExpectRejected(s, 6, "list of source id 1: id 6 at position 1 is outside the vocabulary of 6");
  s = Small();
  s.frequent = {4, 0};
  ExpectRejected(s, 6, "frequent: ids must be ascending and unique, found 4 then 0");
  s.frequent = {0, 9};
  ExpectRejected(s, 6, "frequent: id 9 at position 1 is outside the vocabulary of 6");
  // The converter's input reports the same rules as an invalid checkpoint.
  auto c = CheckShortlist(ViewOf(s, 6), ErrorCode::kInvalidCheckpoint);
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidCheckpoint);
}

TEST(ShortlistRules, TheUnionOfABatch) {
  const ShortlistSpec s = Small();
  const ShortlistView v = ViewOf(s, 6);
  std::vector<uint8_t> marks(6, 7);
  std::vector<int32_t> ids(6, -1);
  const int32_t always[] = {3};
  ShortlistBegin(v, always, 1, marks.data());
  EXPECT_EQ(ShortlistCollect(v, marks.data(), ids.data()), 3u);  // 0, 3, 4
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + 3), (std::vector<int32_t>{0, 3, 4}));
  const int32_t a[] = {1, 0}, b[] = {3, 3};
  ShortlistAddSource(v, a, 2, marks.data());
  ShortlistAddSource(v, b, 2, marks.data());
  ASSERT_EQ(ShortlistCollect(v, marks.data(), nullptr), 6u);
  ShortlistCollect(v, marks.data(), ids.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(ShortlistFile, WriterAndReaderRoundTripAndOldFilesHaveNone) {
  ModelSpec spec = testing::MakeSpec({{1, 3}, {}, {0}, {0, 1, 2, 3}});
  auto plain = SerializeModel(spec);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  const schema::Model* m = schema::GetSizePrefixedModel(plain->data());
  auto none = ShortlistFromSchema(*m, spec.config.vocab_size);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  const uint32_t V = spec.config.vocab_size;
  spec.shortlist.frequent = {0, 2};
  spec.shortlist.offsets.assign(V + 1, 0);
  for (uint32_t s = 1; s <= V; ++s) spec.shortlist.offsets[s] = s >= 4 ? 3 : 0;
  spec.shortlist.targets = {1, 5, V - 1};  // the list of source id 3
  spec.shortlist.description = "a test shortlist";
  auto bytes = SerializeModel(spec);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  m = schema::GetSizePrefixedModel(bytes->data());
  auto read = ShortlistFromSchema(*m, V);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->has_value());
  const ShortlistView& v = (*read)->view;
  EXPECT_EQ(std::vector<uint32_t>(v.frequent, v.frequent + v.num_frequent), spec.shortlist.frequent);
  EXPECT_EQ(std::vector<uint32_t>(v.offsets, v.offsets + v.num_offsets), spec.shortlist.offsets);
  EXPECT_EQ(std::vector<uint32_t>(v.targets, v.targets + v.num_targets), spec.shortlist.targets);
  EXPECT_EQ(v.description, "a test shortlist");
  EXPECT_EQ((*read)->stats.sources, 1u);
  EXPECT_EQ((*read)->stats.longest, 3u);

  spec.shortlist.targets = {5, 1, V - 1};
  auto refused = SerializeModel(spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(refused.status().message().find("list of source id 3"), std::string::npos)
      << refused.status().ToString();
}

const std::vector<std::string> kPieces = {"</s>", "<unk>", "a", "b", "c", "<pad>"};

std::string Header(const std::vector<std::string>& pieces = kPieces) {
  return "# a comment\nheadwise-shortlist\t1\nvocab_size\t" + std::to_string(pieces.size()) +
         "\nvocab_sha256\t" + ShortlistVocabHash(pieces) + "\ndescription\ttest lists\ntop_k\t2\n";
}

TEST(ShortlistFile, ParsesTheTrainersFormat) {
  const std::string text = Header() + "frequent\t2 0\n\nsource\t1\t4 3\nsource\t3\t2\n";
  auto r = ParseShortlist(text, "sl.tsv", kPieces);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->frequent, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(r->offsets, (std::vector<uint32_t>{0, 0, 2, 2, 3, 3, 3}));
  EXPECT_EQ(r->targets, (std::vector<uint32_t>{3, 4, 2}));
  EXPECT_EQ(r->description, "test lists");
  EXPECT_TRUE(CheckShortlist(ViewOf(*r, 6), ErrorCode::kInvalidCheckpoint).ok());
  // No lists at all, an empty frequent record, no trailing newline.
  auto bare = ParseShortlist(Header() + "frequent\t", "sl.tsv", kPieces);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_TRUE(bare->frequent.empty());
  EXPECT_EQ(bare->offsets, std::vector<uint32_t>(7, 0));
}

TEST(ShortlistFile, EveryErrorNamesTheLine) {
  const std::string h = Header();  // 6 lines
  const struct {
    std::string text;
    std::string fragment;
  } cases[] = {
      {"", "sl.tsv: empty (no 'headwise-shortlist' record)"},
      {"headwise-shortlist\t2\n", "sl.tsv:1: expected the first record 'headwise-shortlist<TAB>1'"},
      {"headwise-shortlist\t1\nvocab_size\t7\n", "sl.tsv:2: vocab_size: the checkpoint's vocabulary has 6 pieces"},
      {"headwise-shortlist\t1\nvocab_sha256\t00\n", "sl.tsv:2: vocab_sha256: the shortlist was made for another vocabulary"},
      {"headwise-shortlist\t1\nfrequent\t1\n", "sl.tsv:2: 'vocab_size' and 'vocab_sha256' must come before 'frequent'"},
      {h, "sl.tsv: no 'frequent' record"},
      {h + "source\t1\t2\n", "sl.tsv:7: a 'source' record before 'frequent'"},
      {h + "frequent\t1\nfrequent\t2\n", "sl.tsv:8: a second 'frequent' record"},
      {h + "frequent\t1 6\n", "sl.tsv:7: frequent: id 6 is outside the vocabulary of 6"},
      {h + "frequent\t1 1\n", "sl.tsv:7: frequent: id 1 appears more than once"},
      {h + "frequent\t1  2\n", "sl.tsv:7: frequent: expected ids separated by single spaces, found ''"},
      {h + "frequent\t-1\n", "found '-1'"},
      {h + "frequent\t99999999999\n", "found '99999999999'"},
      {h + "frequent\t1\nsource\t3\t2\nsource\t2\t1\n", "sl.tsv:9: source ids must be ascending, found 2 after 3"},
      {h + "frequent\t1\nsource\t6\t2\n", "sl.tsv:8: source id 6 is outside the vocabulary of 6"},
      {h + "frequent\t1\nsource\t2\n", "sl.tsv:8: expected 'source<TAB>SOURCE_ID<TAB>IDS'"},
      {h + "frequent\t1\nsource\t2\t3 x\n", "sl.tsv:8: source id 2: expected ids separated by single spaces, found 'x'"},
      {h + "frequent\t1\nsource\t2\t3 3\n", "sl.tsv:8: source id 2: id 3 appears more than once"},
      {h + "frequent\t1\nbogus\n", "sl.tsv:8: expected a 'source' record after 'frequent'"},
      {h + "key only\n", "sl.tsv:7: expected 'KEY<TAB>VALUE'"},
  };
  for (const auto& c : cases) {
    auto r = ParseShortlist(c.text, "sl.tsv", kPieces);
    ASSERT_FALSE(r.ok()) << "accepted: " << c.text;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidCheckpoint);
    EXPECT_NE(r.status().message().find(c.fragment), std::string::npos)
        << "want '" << c.fragment << "', got " << r.status().ToString();
  }
  // Another vocabulary of the same size: the hash tells them apart.
  std::vector<std::string> other = kPieces;
  other[2] = "z";
  auto r = ParseShortlist(Header(other) + "frequent\t1\n", "sl.tsv", kPieces);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("made for another vocabulary"), std::string::npos);
}

class ConvertShortlistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    fixture_.Write(dir_ / "ckpt");
    pieces_.assign(12, "");
    for (const auto& [piece, id] : fixture_.vocab.items()) pieces_[id.get<size_t>()] = piece;
  }
  std::string WriteShortlist(const std::string& body) {
    const std::string text = "headwise-shortlist\t1\nvocab_size\t12\nvocab_sha256\t" +
                             ShortlistVocabHash(pieces_) + "\ndescription\tfrom the test\n" + body;
    testing::WriteAll(dir_ / "sl.tsv", text);
    return dir_ / "sl.tsv";
  }
  int Cli(const std::vector<std::string>& args, std::string* out, std::string* err) {
    std::ostringstream o, e;
    const int code = RunConvertCli(args, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  }
  testing::TempDir dir_;
  testing::CheckpointFixture fixture_ = testing::MakeCheckpoint();
  std::vector<std::string> pieces_;
};

TEST_F(ConvertShortlistTest, StoredAndShownByInspect) {
  const std::string sl = WriteShortlist("frequent\t2 3 4\nsource\t5\t9 7 8\nsource\t6\t7\n");
  std::string out, err;
  ASSERT_EQ(Cli({dir_ / "ckpt", "-o", dir_ / "m.hwm", "--shortlist", sl, "--weights", "int8"},
                &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("shortlist 3 frequent pieces, lists for 2 source pieces (longest 3, 4 "
                     "entries) from " + sl),
            std::string::npos)
      << out;
  auto report = InspectModelFile(dir_ / "m.hwm");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const nlohmann::json& s = (*report)["shortlist"];
  EXPECT_EQ(s["frequent"], 3);
  EXPECT_EQ(s["sources"], 2);
  EXPECT_EQ(s["longest"], 3);
  EXPECT_EQ(s["entries"], 4);
  EXPECT_EQ(s["description"], "from the test");
  const std::string text = FormatInspectText(*report);
  EXPECT_NE(text.find("vocabulary shortlist: 3 frequent pieces, lists for 2 source pieces "
                      "(longest 3, 4 entries); from the test"),
            std::string::npos)
      << text;
  ASSERT_EQ(Cli({"inspect", dir_ / "m.hwm", "--json"}, &out, &err), 0) << err;
  EXPECT_EQ(nlohmann::json::parse(out)["shortlist"], s);

  // Without --shortlist: none, said so.
  ASSERT_EQ(Cli({dir_ / "ckpt", "-o", dir_ / "plain.hwm"}, &out, &err), 0) << err;
  EXPECT_NE(out.find("shortlist none"), std::string::npos) << out;
  auto plain = InspectModelFile(dir_ / "plain.hwm");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE((*plain)["shortlist"].is_null());
  EXPECT_NE(FormatInspectText(*plain).find("vocabulary shortlist: none"), std::string::npos);
}

TEST_F(ConvertShortlistTest, AShortlistOfAnotherVocabularyWritesNothing) {
  pieces_[4] = "other";
  const std::string sl = WriteShortlist("frequent\t2\n");
  std::string out, err;
  EXPECT_EQ(Cli({dir_ / "ckpt", "-o", dir_ / "m.hwm", "--shortlist", sl}, &out, &err), 1);
  EXPECT_NE(err.find("made for another vocabulary"), std::string::npos) << err;
  EXPECT_NE(err.find("nothing was written"), std::string::npos) << err;
  EXPECT_TRUE(testing::ReadAll(dir_ / "m.hwm").empty());
  // The shortlist is an input: the output may not replace it.
  pieces_[4] = "\xe2\x96\x81w4";
  const std::string good = WriteShortlist("frequent\t2\n");
  EXPECT_EQ(Cli({dir_ / "ckpt", "-o", good, "--shortlist", good, "--force"}, &out, &err), 1);
  EXPECT_FALSE(testing::ReadAll(good).empty());
  EXPECT_EQ(Cli({dir_ / "ckpt", "-o", dir_ / "m.hwm", "--shortlist"}, &out, &err), 2);
  EXPECT_NE(err.find("'--shortlist' needs a value"), std::string::npos) << err;
  EXPECT_EQ(Cli({dir_ / "ckpt", "-o", dir_ / "m.hwm", "--shortlist", dir_ / "missing.tsv"}, &out,
                &err),
            1);
}

}  // namespace
}  // namespace headwise::convert
