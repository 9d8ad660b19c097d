#include "converter/src/inspect.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <string>

#include "common/checksum.h"
#include "format/file_layout.h"
#include "format/model_writer.h"
#include "headwise_generated.h"
#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/spec_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

namespace sc = ::headwise::schema;

TEST(Inspect, ReportsAWriterModel) {
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const ModelSpec spec = testing::MakeSpec({{1, 3}, {}, {0}, {0, 1, 2, 3}});
  ASSERT_TRUE(WriteModelFile(spec, dir / "m.hwm", {}).ok());
  auto r = InspectModelFile(dir / "m.hwm");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const nlohmann::json& j = *r;
  EXPECT_EQ(j["config"]["activation"], "relu");
  EXPECT_EQ(j["config"]["unk_token_id"], 1);
  EXPECT_EQ(j["attention"][0]["kept_heads"], nlohmann::json({1, 3}));
  EXPECT_EQ(j["attention"][1]["num_heads"], 0);
  EXPECT_EQ(j["attention"][3]["kind"], "decoder_cross");
  EXPECT_EQ(j["attention"][3]["block"], "model.decoder.layers.0.encoder_attn");
  EXPECT_EQ(j["heads"]["kept"], 7);
  EXPECT_EQ(j["heads"]["total"], 16);
  EXPECT_EQ(j["tensors"]["count"], ExpectedTensors(spec.config, spec.blocks).size());
  EXPECT_EQ(j["data"]["offset"].get<uint64_t>() % kTensorAlignment, 0u);
  EXPECT_EQ(j["provenance"]["source_checkpoint_name"], "tiny");
  const std::string text = FormatInspectText(j);
  EXPECT_NE(text.find("attention heads kept: 7 of 16"), std::string::npos) << text;
}

TEST(Inspect, ShowsTheGateRule) {
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  ModelSpec spec = testing::MakeSpec({{1, 3}, {}, {0}, {0, 1, 2, 3}});
  spec.gate_log_alpha.clear();
  ASSERT_TRUE(WriteModelFile(spec, dir / "none.hwm", {}).ok());
  auto none = InspectModelFile(dir / "none.hwm");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE((*none)["gate_rule"].is_null());  // no gates, no rule
  EXPECT_EQ(FormatInspectText(*none).find("gate rule"), std::string::npos);

  spec.gate_log_alpha.assign(spec.blocks.size(), {});
  for (size_t i = 0; i < spec.blocks.size(); ++i) {
    for (uint32_t h = 0; h < spec.blocks[i].original_num_heads; ++h) {
      bool kept = false;
      for (uint32_t k : spec.blocks[i].kept_heads) kept = kept || k == h;
      spec.gate_log_alpha[i].push_back(kept ? 1.0f : -3.0f);
    }
  }
  for (GateRule rule : {GateRule::kHard, GateRule::kContinuous}) {
    spec.gate_rule = rule;
    const std::string path = dir / (std::string(GateRuleName(rule)) + ".hwm");
    ASSERT_TRUE(WriteModelFile(spec, path, {}).ok());
    auto r = InspectModelFile(path);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)["gate_rule"], GateRuleName(rule));
    const std::string text = FormatInspectText(*r);
    EXPECT_NE(text.find(std::string("gate rule: ") + GateRuleName(rule) + " ("), std::string::npos)
        << text;
  }
}

TEST(Inspect, UnreadableFileIsAnIoError) {
  auto r = InspectModelFile("/nonexistent/m.hwm");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kIoError);
}

// A structurally valid file whose layout is wrong (no attention blocks, no tensors) passes the
// Verifier but not the layout rules.
TEST(Inspect, RejectsAFileThatBreaksTheLayoutRules) {
  // An empty data segment at 1024, well after this small flatbuffer.
  constexpr uint64_t kDataOffset = 1024;
  flatbuffers::FlatBufferBuilder b;
  b.ForceDefaults(true);
  const auto config = sc::CreateModelConfig(b, 8, 1, 1, 4, 4, 16, 16, sc::Activation::Swish, 10,
                                            32, 0, 1, 0, 2);
  const auto root = sc::CreateModel(b, kFormatVersion, config, 0, 0, 0, 0, kDataOffset, 0,
                                    kFnv1a64Init);  // checksum of 0 bytes
  sc::FinishSizePrefixedModelBuffer(b, root);
  ASSERT_LT(b.GetSize(), kDataOffset);
  std::string image(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  image.resize(kDataOffset, '\0');

  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  testing::WriteAll(dir / "bad.hwm", image);
  auto r = InspectModelFile(dir / "bad.hwm");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidModel) << r.status().ToString();
  EXPECT_NE(r.status().message().find("expected 3 attention blocks"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace headwise::convert
