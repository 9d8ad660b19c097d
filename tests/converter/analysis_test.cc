// The per-head analysis (analysis.json from `headwise-train analyze`): parsed and matched to
// the checkpoint (analysis_reader.h), stored by the converter for every source head, closed
// heads included, and shown by inspect.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "converter/src/analysis_reader.h"
#include "converter/src/convert.h"
#include "converter/src/inspect.h"
#include "converter/src/sha256.h"
#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

using nlohmann::json;
using testing::CheckpointFixture;
using testing::MakeCheckpoint;

// The fixture's blocks (2 encoder + 2 decoder layers, 4 heads each) in canonical order.
const std::vector<std::pair<std::string, int>> kBlocks = {
    {"encoder_self", 0}, {"encoder_self", 1}, {"decoder_self", 0},
    {"decoder_self", 1}, {"decoder_cross", 0}, {"decoder_cross", 1}};

// An analysis.json for the fixture: head h of block b has relevance (b * 4 + h) / 100,
// confidence 0.5 + h / 10, michel h / 4; head 1 of every block is "positional".
json MakeAnalysis(const std::string& sha256) {
  json blocks = json::array();
  for (size_t b = 0; b < kBlocks.size(); ++b) {
    json heads = json::array();
    for (int h = 0; h < 4; ++h) {
      heads.push_back({{"head", h},
                       {"gate_open", true},
                       {"relevance", static_cast<double>(b * 4 + h) / 100.0},
                       {"confidence", 0.5 + h / 10.0},
                       {"michel", h / 4.0},
                       {"positional", nullptr},
                       {"roles", h == 1 ? json::array({"positional"}) : json::array()}});
    }
    blocks.push_back({{"kind", kBlocks[b].first},
                      {"layer", kBlocks[b].second},
                      {"source_heads", 4},
                      {"heads", heads}});
  }
  return {{"format", "headwise-head-analysis"},
          {"version", 1},
          {"checkpoint", {{"path", "ckpt"}, {"model_safetensors_sha256", sha256}}},
          {"data", {{"corpus", "corpus-x"}, {"split", "dev"}, {"sentences", 12},
                    {"generation", "greedy"}}},
          {"methods", {{"relevance", "attnlrp"}}},
          {"blocks", blocks}};
}

std::vector<BlockLayout> FixtureBlocks() {
  std::vector<BlockLayout> out;
  for (const auto& [kind, layer] : kBlocks) {
    BlockLayout b;
    b.kind = kind == "encoder_self"   ? AttentionKind::kEncoderSelf
             : kind == "decoder_self" ? AttentionKind::kDecoderSelf
                                      : AttentionKind::kDecoderCross;
    b.layer = static_cast<uint32_t>(layer);
    b.original_num_heads = 4;
    b.num_heads = 4;
    b.head_dim = 2;
    b.kept_heads = {0, 1, 2, 3};
    out.push_back(b);
  }
  return out;
}

// The inspect text row for one head, with single spaces (the text is compared after
// collapsing runs of spaces).
std::string Row(const std::string& block, const std::string& head, const std::string& rest) {
  return block + " " + head + " " + rest + "\n";
}

std::string CollapseSpaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

class AnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    CheckpointFixture f = MakeCheckpoint();
    // Close heads 0 and 2 of encoder layer 0: their analysis must still be stored.
    f.SetGate("model.encoder.layers.0.self_attn", {-3.0f, 2.0f, -1.0f, 4.0f});
    f.Write(Checkpoint());
    sha_ = Sha256Hex(testing::ReadAll(Checkpoint() + "/model.safetensors").data(),
                     testing::ReadAll(Checkpoint() + "/model.safetensors").size());
  }
  std::string Checkpoint() const { return dir_ / "ckpt"; }
  void WriteAnalysis(const json& j, const std::string& path) {
    testing::WriteAll(path, j.dump(1));
  }
  Result<ConvertSummary> Convert(std::optional<std::string> analysis = {},
                                 bool no_analysis = false) {
    ConvertOptions o;
    o.checkpoint_dir = Checkpoint();
    o.output_path = dir_ / "out.hwm";
    o.analysis = std::move(analysis);
    o.no_analysis = no_analysis;
    return ConvertCheckpoint(o);
  }

  testing::TempDir dir_;
  std::string sha_;
};

TEST_F(AnalysisTest, CheckpointAnalysisIsStoredForEverySourceHeadAndInspected) {
  WriteAnalysis(MakeAnalysis(sha_), Checkpoint() + "/analysis.json");
  auto summary = Convert();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->analysis_path, Checkpoint() + "/analysis.json");
  EXPECT_NE(FormatConvertSummary(*summary).find("analysis per-head relevance"), std::string::npos);

  auto report = InspectModelFile(dir_ / "out.hwm");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const json& r = *report;
  ASSERT_TRUE(r["analysis"].is_object());
  EXPECT_EQ(r["analysis"]["relevance_rule"], "attnlrp");
  EXPECT_EQ(r["analysis"]["data"], "corpus-x, dev split, 12 sentences, greedy");
  const std::string text = testing::ReadAll(Checkpoint() + "/analysis.json");
  EXPECT_EQ(r["analysis"]["analysis_sha256"], Sha256Hex(text.data(), text.size()));

  ASSERT_EQ(r["attention"].size(), kBlocks.size());
  for (size_t b = 0; b < kBlocks.size(); ++b) {
    const json& heads = r["attention"][b]["analysis"];
    ASSERT_EQ(heads.size(), 4u) << b;
    for (int h = 0; h < 4; ++h) {
      EXPECT_EQ(heads[h]["head"], h);
      EXPECT_NEAR(heads[h]["relevance"].get<double>(), (b * 4 + h) / 100.0, 1e-6);
      EXPECT_NEAR(heads[h]["confidence"].get<double>(), 0.5 + h / 10.0, 1e-6);
      EXPECT_NEAR(heads[h]["michel"].get<double>(), h / 4.0, 1e-6);
      EXPECT_EQ(heads[h]["roles"], h == 1 ? json::array({"positional"}) : json::array());
      // Encoder layer 0 closed heads 0 and 2; every other head is kept.
      const bool kept = !(b == 0 && (h == 0 || h == 2));
      EXPECT_EQ(heads[h]["kept"].get<bool>(), kept) << b << " " << h;
    }
  }
  const std::string shown = CollapseSpaces(FormatInspectText(r));
  EXPECT_NE(shown.find("per-head analysis (relevance rule attnlrp"), std::string::npos) << shown;
  // One line per source head: block, head (* = kept), relevance, confidence, michel, roles.
  EXPECT_NE(shown.find(Row("model.encoder.layers.0.self_attn", "1*", "0.010 0.600 0.250 positional")),
            std::string::npos) << shown;
  EXPECT_NE(shown.find(Row("model.encoder.layers.0.self_attn", "2", "0.020 0.700 0.500 -")),
            std::string::npos) << shown;
  EXPECT_NE(shown.find(Row("model.decoder.layers.1.encoder_attn", "3*", "0.230 0.800 0.750 -")),
            std::string::npos) << shown;
}

TEST_F(AnalysisTest, WithoutAnalysisTheFileHasNone) {
  auto summary = Convert();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_TRUE(summary->analysis_path.empty());
  auto report = InspectModelFile(dir_ / "out.hwm");
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE((*report)["analysis"].is_null());
  for (const json& a : (*report)["attention"]) EXPECT_TRUE(a["analysis"].empty());
  EXPECT_EQ(FormatInspectText(*report).find("per-head analysis"), std::string::npos);
}

TEST_F(AnalysisTest, NoAnalysisOptionIgnoresTheCheckpointsFile) {
  WriteAnalysis(MakeAnalysis(sha_), Checkpoint() + "/analysis.json");
  auto summary = Convert({}, /*no_analysis=*/true);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  auto report = InspectModelFile(dir_ / "out.hwm");
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE((*report)["analysis"].is_null());
}

TEST_F(AnalysisTest, ExplicitFileIsUsedAndAMissingOneIsAnError) {
  json j = MakeAnalysis(sha_);
  j["methods"]["relevance"] = "z";
  WriteAnalysis(j, dir_ / "elsewhere.json");
  auto summary = Convert(dir_ / "elsewhere.json");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  auto report = InspectModelFile(dir_ / "out.hwm");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ((*report)["analysis"]["relevance_rule"], "z");

  auto missing = Convert(dir_ / "missing.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIoError) << missing.status().ToString();
}

TEST_F(AnalysisTest, AnalysisOfAnotherCheckpointIsRefusedAndNothingIsWritten) {
  WriteAnalysis(MakeAnalysis(std::string(64, 'a')), Checkpoint() + "/analysis.json");
  auto summary = Convert();
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(summary.status().message().find("made for another checkpoint"), std::string::npos)
      << summary.status().ToString();
  EXPECT_TRUE(testing::ReadAll(dir_ / "out.hwm").empty());
}

TEST_F(AnalysisTest, AnalysisWithoutAHashIsAccepted) {
  json j = MakeAnalysis(sha_);
  j["checkpoint"]["model_safetensors_sha256"] = nullptr;  // e.g. a run directory was analysed
  WriteAnalysis(j, Checkpoint() + "/analysis.json");
  EXPECT_TRUE(Convert().ok());
}

// ---- The parser names what is wrong. ----

struct BadCase {
  const char* name;
  void (*edit)(json*);
  const char* expect;  // a substring of the message
};

const BadCase kBadCases[] = {
    {"WrongFormat", [](json* j) { (*j)["format"] = "other"; }, "format: expected"},
    {"NewerVersion", [](json* j) { (*j)["version"] = 2; }, "version: expected 1"},
    {"MissingBlock", [](json* j) { (*j)["blocks"].erase(5); }, "array of 6 attention blocks"},
    {"BlocksOutOfOrder",
     [](json* j) { std::swap((*j)["blocks"][0], (*j)["blocks"][2]); },
     "blocks[0]: expected encoder_self layer 0, found \"decoder_self\" layer 0"},
    {"WrongHeadCount", [](json* j) { (*j)["blocks"][1]["source_heads"] = 8; },
     "source_heads: expected 4"},
    {"HeadMissing", [](json* j) { (*j)["blocks"][3]["heads"].erase(3); },
     "heads: expected an array of 4 entries, found 3 entries"},
    {"HeadsOutOfOrder",
     [](json* j) { std::swap((*j)["blocks"][4]["heads"][0], (*j)["blocks"][4]["heads"][1]); },
     "heads[0]: expected an object with \"head\": 0, found 1"},
    {"RelevanceNotANumber", [](json* j) { (*j)["blocks"][0]["heads"][2]["relevance"] = "high"; },
     "heads[2].relevance: expected a number or null, found a string"},
    {"HugeNumber", [](json* j) { (*j)["blocks"][0]["heads"][2]["michel"] = 1e300; },
     "michel: expected a finite number"},
    {"RolesNotStrings", [](json* j) { (*j)["blocks"][0]["heads"][0]["roles"] = {1, 2}; },
     "roles: expected strings"},
};

class BadAnalysisTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadAnalysisTest, IsAnInvalidCheckpointNamingThePlace) {
  json j = MakeAnalysis("abc");
  GetParam().edit(&j);
  auto parsed = ParseHeadAnalysis(j.dump(), "analysis.json", FixtureBlocks(), "abc");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(parsed.status().message().find(GetParam().expect), std::string::npos)
      << parsed.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Cases, BadAnalysisTest, ::testing::ValuesIn(kBadCases),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(AnalysisParse, NullStatisticsAreNotComputed) {
  json j = MakeAnalysis("abc");
  j["blocks"][2]["heads"][1]["michel"] = nullptr;
  j["blocks"][2]["heads"][1].erase("confidence");
  j["blocks"][2]["heads"][1].erase("roles");
  auto parsed = ParseHeadAnalysis(j.dump(), "analysis.json", FixtureBlocks(), "abc");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const HeadAnalysisSpec& h = parsed->blocks[2][1];
  EXPECT_TRUE(std::isnan(h.michel));
  EXPECT_TRUE(std::isnan(h.confidence));
  EXPECT_TRUE(h.roles.empty());
  EXPECT_FLOAT_EQ(h.relevance, 0.09f);
}

TEST(AnalysisParse, DuplicateKeysAndBrokenJsonAreRefused) {
  auto broken = ParseHeadAnalysis("{\"format\": ", "a.json", FixtureBlocks(), "abc");
  EXPECT_EQ(broken.status().code(), ErrorCode::kInvalidCheckpoint);
  auto dup = ParseHeadAnalysis("{\"format\": 1, \"format\": 2}", "a.json", FixtureBlocks(), "abc");
  EXPECT_EQ(dup.status().code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(dup.status().message().find("duplicate key"), std::string::npos);
}

}  // namespace
}  // namespace headwise::convert
