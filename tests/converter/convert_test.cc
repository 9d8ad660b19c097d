// End to end: checkpoint directory -> ConvertCheckpoint -> .hwm read back.
#include "converter/src/convert.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "converter/src/sha256.h"
#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/model_readback.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

using testing::CheckpointFixture;
using testing::MakeCheckpoint;
using testing::ReadBack;
using testing::ReadBackModel;

const std::string kEnc0 = "model.encoder.layers.0.self_attn";
const std::string kEnc1 = "model.encoder.layers.1.self_attn";
const std::string kDec0 = "model.decoder.layers.0.self_attn";
const std::string kCross1 = "model.decoder.layers.1.encoder_attn";

class ConvertTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }

  std::string WriteCheckpoint(const CheckpointFixture& f) {
    f.Write(dir_ / "ckpt");
    return dir_ / "ckpt";
  }
  Result<ConvertSummary> Convert(const std::string& checkpoint, std::optional<std::string> keep = {},
                                 bool force = false) {
    ConvertOptions o;
    o.checkpoint_dir = checkpoint;
    o.output_path = dir_ / "out.hwm";
    o.keep_heads = std::move(keep);
    o.force = force;
    return ConvertCheckpoint(o);
  }
  ReadBackModel Output() {
    auto m = ReadBack(dir_ / "out.hwm");
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : ReadBackModel{};
  }

  testing::TempDir dir_;
};

// ---- A valid checkpoint, in each source dtype, reads back exactly. ----

class ConvertDTypeTest : public ConvertTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ConvertDTypeTest, TensorsReadBackEqual) {
  CheckpointFixture f = MakeCheckpoint();
  f.SetDType(GetParam());
  const std::string ckpt = WriteCheckpoint(f);
  auto summary = Convert(ckpt);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const ReadBackModel m = Output();
  ASSERT_EQ(m.tensors.size(), f.tensors.size());
  for (const testing::FixtureTensor& t : f.tensors) {
    auto it = m.tensors.find(t.name);
    ASSERT_NE(it, m.tensors.end()) << t.name;
    EXPECT_EQ(std::vector<uint64_t>(it->second.shape.begin(), it->second.shape.end()), t.shape)
        << t.name;
    EXPECT_EQ(it->second.values, t.values) << t.name;
  }
  EXPECT_EQ(m.source_dtype, GetParam());
  EXPECT_EQ(m.source_name, "ckpt");
  EXPECT_EQ(m.keep_heads_spec, "");
  const std::string weights = testing::ReadAll(ckpt + "/model.safetensors");
  EXPECT_EQ(m.source_sha256, Sha256Hex(weights.data(), weights.size()));
  EXPECT_EQ(m.converter_version, HEADWISE_VERSION);
  EXPECT_EQ(m.vocab.size(), 12u);
  EXPECT_EQ(m.vocab[11], "<pad>");
  EXPECT_EQ(m.unk_token_id, 1);
  EXPECT_EQ(m.source_spm, f.source_spm);
  EXPECT_EQ(m.target_spm, f.target_spm);
  for (const auto& b : m.blocks) {
    EXPECT_EQ(b.num_heads, 4u);
    EXPECT_TRUE(b.gate_log_alpha.empty());
  }
  EXPECT_EQ(summary->tensor_count, f.tensors.size());
}

INSTANTIATE_TEST_SUITE_P(SourceDTypes, ConvertDTypeTest, ::testing::Values("F32", "F16", "BF16"));

TEST_F(ConvertTest, MixedDTypesAreRecordedAsMixed) {
  CheckpointFixture f = MakeCheckpoint();
  f.Get("final_logits_bias").dtype = "BF16";
  ASSERT_TRUE(Convert(WriteCheckpoint(f)).ok());
  EXPECT_EQ(Output().source_dtype, "mixed");
}

// ---- Head stripping. ----

TEST_F(ConvertTest, GatesStripTheRightRowsAndColumns) {
  CheckpointFixture f = MakeCheckpoint();
  f.SetGate(kEnc0, {2.0f, -1.0f, 0.5f, 0.0f});  // keeps 0 and 2 (0.0 is closed)
  f.SetGate(kCross1, {-3.0f, -3.0f, -3.0f, 1.0f});  // keeps 3
  const std::string ckpt = WriteCheckpoint(f);
  ASSERT_TRUE(Convert(ckpt).ok());
  const ReadBackModel m = Output();

  // head_dim 2, d_model 8: head h = rows [2h, 2h+2) of q/k/v, columns [2h, 2h+2) of out_proj.
  for (const char* proj : {"q_proj", "k_proj", "v_proj"}) {
    const std::string w = kEnc0 + "." + proj + ".weight";
    const std::vector<float>& src = f.Get(w).values;
    std::vector<float> expected(src.begin() + 0 * 8, src.begin() + 2 * 8);      // rows 0,1
    expected.insert(expected.end(), src.begin() + 4 * 8, src.begin() + 6 * 8);  // rows 4,5
    EXPECT_EQ(m.tensors.at(w).shape, (std::vector<uint32_t>{4, 8})) << w;
    EXPECT_EQ(m.tensors.at(w).values, expected) << w;
    const std::string b = kEnc0 + "." + proj + ".bias";
    const std::vector<float>& sb = f.Get(b).values;
    EXPECT_EQ(m.tensors.at(b).values, (std::vector<float>{sb[0], sb[1], sb[4], sb[5]})) << b;
  }
  const std::vector<float>& out = f.Get(kEnc0 + ".out_proj.weight").values;
  std::vector<float> expected_out;
  for (int r = 0; r < 8; ++r) {
    for (int c : {0, 1, 4, 5}) expected_out.push_back(out[r * 8 + c]);
  }
  EXPECT_EQ(m.tensors.at(kEnc0 + ".out_proj.weight").shape, (std::vector<uint32_t>{8, 4}));
  EXPECT_EQ(m.tensors.at(kEnc0 + ".out_proj.weight").values, expected_out);
  EXPECT_EQ(m.tensors.at(kEnc0 + ".out_proj.bias").values, f.Get(kEnc0 + ".out_proj.bias").values);

  const std::vector<float>& q = f.Get(kCross1 + ".q_proj.weight").values;
  EXPECT_EQ(m.tensors.at(kCross1 + ".q_proj.weight").values,
            std::vector<float>(q.begin() + 6 * 8, q.end()));
  EXPECT_EQ(m.tensors.at(kEnc1 + ".q_proj.weight").values, f.Get(kEnc1 + ".q_proj.weight").values);

  EXPECT_EQ(m.blocks[0].kept_heads, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(m.blocks[0].gate_log_alpha, (std::vector<float>{2.0f, -1.0f, 0.5f, 0.0f}));
  EXPECT_EQ(m.blocks[1].kept_heads, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_TRUE(m.blocks[1].gate_log_alpha.empty());
  EXPECT_EQ(m.blocks[5].kept_heads, (std::vector<uint32_t>{3}));
  // The gate tensors themselves are not model tensors.
  EXPECT_EQ(m.tensors.count(kEnc0 + ".head_gate.log_alpha"), 0u);
}

TEST_F(ConvertTest, ContinuousGatesAreFoldedIntoOutProjColumns) {
  CheckpointFixture f = MakeCheckpoint();
  // Continuous gates g = clamp(sigmoid(a) * 1.2 - 0.1, 0, 1): 1.0 (a = 4), 0 (a = -3, removed),
  // 0.5 (a = 0), 0.881089 (a = 1.5). Under the hard rule only heads 0 and 3 would stay.
  const std::vector<float> la = {4.0f, -3.0f, 0.0f, 1.5f};
  f.SetGate(kEnc0, la);
  f.config["headwise_gate_rule"] = "continuous";
  ASSERT_TRUE(Convert(WriteCheckpoint(f)).ok());
  const ReadBackModel m = Output();
  EXPECT_EQ(m.blocks[0].kept_heads, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(m.gate_rule, "continuous");
  const std::vector<float>& out = f.Get(kEnc0 + ".out_proj.weight").values;
  std::vector<float> expected;
  for (int r = 0; r < 8; ++r) {
    for (int h : {0, 2, 3}) {
      const float s = 1.0f / (1.0f + std::exp(-la[h]));
      const float g = std::clamp(s * 1.2f - 0.1f, 0.0f, 1.0f);
      for (int c = 0; c < 2; ++c) expected.push_back(out[r * 8 + 2 * h + c] * g);
    }
  }
  EXPECT_EQ(m.tensors.at(kEnc0 + ".out_proj.weight").values, expected);
  EXPECT_NE(expected[2], out[4]);  // head 2's columns were scaled by 0.5
  // q/k/v are stripped, not scaled.
  const std::vector<float>& q = f.Get(kEnc0 + ".q_proj.weight").values;
  EXPECT_EQ(std::vector<float>(m.tensors.at(kEnc0 + ".q_proj.weight").values.begin(),
                               m.tensors.at(kEnc0 + ".q_proj.weight").values.begin() + 16),
            std::vector<float>(q.begin(), q.begin() + 16));

  // --gate-rule hard overrides the checkpoint's rule: heads 0 and 3, unscaled, nothing stored.
  ConvertOptions o;
  o.checkpoint_dir = dir_ / "ckpt";
  o.output_path = dir_ / "hard.hwm";
  o.gate_rule = GateRule::kHard;
  ASSERT_TRUE(ConvertCheckpoint(o).ok());
  auto hard = ReadBack(dir_ / "hard.hwm");
  ASSERT_TRUE(hard.ok());
  EXPECT_EQ(hard->blocks[0].kept_heads, (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(hard->gate_rule, "");
  std::vector<float> unscaled;
  for (int r = 0; r < 8; ++r) {
    for (int c : {0, 1, 6, 7}) unscaled.push_back(out[r * 8 + c]);
  }
  EXPECT_EQ(hard->tensors.at(kEnc0 + ".out_proj.weight").values, unscaled);
}

TEST_F(ConvertTest, AnUnknownGateRuleInTheConfigIsAnError) {
  CheckpointFixture f = MakeCheckpoint();
  f.config["headwise_gate_rule"] = "soft";
  auto s = Convert(WriteCheckpoint(f));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("headwise_gate_rule: expected \"hard\" or \"continuous\""),
            std::string::npos)
      << s.status().message();
}

TEST_F(ConvertTest, ZeroHeadBlockKeepsOnlyOutProjBias) {
  CheckpointFixture f = MakeCheckpoint();
  f.SetGate(kDec0, {-1.0f, -2.0f, 0.0f, -0.5f});
  ASSERT_TRUE(Convert(WriteCheckpoint(f)).ok());
  const ReadBackModel m = Output();
  for (const char* name : {"q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                           "v_proj.weight", "v_proj.bias", "out_proj.weight"}) {
    EXPECT_EQ(m.tensors.count(kDec0 + "." + name), 0u) << name;
  }
  EXPECT_EQ(m.tensors.at(kDec0 + ".out_proj.bias").values, f.Get(kDec0 + ".out_proj.bias").values);
  EXPECT_EQ(m.blocks[2].num_heads, 0u);
  EXPECT_TRUE(m.blocks[2].kept_heads.empty());
  EXPECT_EQ(m.tensors.size(), f.tensors.size() - 1 - 7);  // minus the gate, minus 7 tensors
}

TEST_F(ConvertTest, KeepHeadsOverridesTheGates) {
  CheckpointFixture f = MakeCheckpoint();
  f.SetGate(kEnc0, {-1.0f, -1.0f, -1.0f, -1.0f});
  const std::string ckpt = WriteCheckpoint(f);
  auto summary = Convert(ckpt, "enc.0=1,3; cross.*=; dec.1=2");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const ReadBackModel m = Output();
  EXPECT_EQ(m.blocks[0].kept_heads, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(m.blocks[0].gate_log_alpha, (std::vector<float>{-1.0f, -1.0f, -1.0f, -1.0f}));
  EXPECT_EQ(m.blocks[1].num_heads, 4u);
  EXPECT_EQ(m.blocks[3].kept_heads, std::vector<uint32_t>{2});
  EXPECT_EQ(m.blocks[4].num_heads, 0u);
  EXPECT_EQ(m.blocks[5].num_heads, 0u);
  const std::vector<float>& v = f.Get(kEnc0 + ".v_proj.bias").values;
  EXPECT_EQ(m.tensors.at(kEnc0 + ".v_proj.bias").values, (std::vector<float>{v[2], v[3], v[6], v[7]}));
  EXPECT_EQ(m.keep_heads_spec, "enc.0=1,3; cross.*=; dec.1=2");
}

TEST_F(ConvertTest, KeepHeadsFromAFile) {
  const std::string ckpt = WriteCheckpoint(MakeCheckpoint());
  testing::WriteAll(dir_ / "heads.txt", "enc.*=0\n# all decoder self heads stay\n");
  ASSERT_TRUE(Convert(ckpt, dir_ / "heads.txt").ok());
  const ReadBackModel m = Output();
  EXPECT_EQ(m.blocks[0].kept_heads, std::vector<uint32_t>{0});
  EXPECT_EQ(m.blocks[1].kept_heads, std::vector<uint32_t>{0});
  EXPECT_EQ(m.blocks[2].num_heads, 4u);
}

TEST_F(ConvertTest, KeepHeadsThatDoNotFitAreInvalidArgumentsAndWriteNothing) {
  const std::string ckpt = WriteCheckpoint(MakeCheckpoint());
  auto r = Convert(ckpt, "enc.2=0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("layer 2 out of range, the encoder has 2 layers"),
            std::string::npos);
  EXPECT_EQ(testing::ListDir(dir_.path()), std::vector<std::string>{"ckpt"});
}

// ---- Embedding variants and Hugging Face duplicates. ----

TEST_F(ConvertTest, UntiedUnsharedEmbeddings) {
  testing::FixtureOptions o;
  o.share_embeddings = false;
  o.tie_embeddings = false;
  o.with_duplicates = true;  // positions only: nothing else is a duplicate here
  CheckpointFixture f = MakeCheckpoint(o);
  ASSERT_TRUE(Convert(WriteCheckpoint(f)).ok());
  const ReadBackModel m = Output();
  EXPECT_EQ(m.tensors.at("lm_head.weight").values, f.Get("lm_head.weight").values);
  EXPECT_EQ(m.tensors.at("model.decoder.embed_tokens.weight").values,
            f.Get("model.decoder.embed_tokens.weight").values);
  EXPECT_EQ(m.tensors.count("model.shared.weight"), 0u);
  EXPECT_EQ(m.tensors.count("model.encoder.embed_positions.weight"), 0u);
}

TEST_F(ConvertTest, HuggingFaceDuplicatesAreCheckedAndDropped) {
  testing::FixtureOptions o;
  o.with_duplicates = true;
  CheckpointFixture f = MakeCheckpoint(o);
  ASSERT_TRUE(Convert(WriteCheckpoint(f)).ok());
  const ReadBackModel m = Output();
  for (const char* dropped : {"lm_head.weight", "model.encoder.embed_tokens.weight",
                              "model.decoder.embed_tokens.weight",
                              "model.encoder.embed_positions.weight"}) {
    EXPECT_EQ(m.tensors.count(dropped), 0u) << dropped;
  }
  EXPECT_EQ(m.tensors.at("model.shared.weight").values, f.Get("model.shared.weight").values);
}

TEST_F(ConvertTest, SharedEmbeddingFallsBackToEncoderEmbedTokens) {
  testing::FixtureOptions o;
  o.with_duplicates = true;
  CheckpointFixture f = MakeCheckpoint(o);
  const std::vector<float> shared = f.Get("model.shared.weight").values;
  f.Remove("model.shared.weight");
  ASSERT_TRUE(Convert(WriteCheckpoint(f)).ok()) ;
  EXPECT_EQ(Output().tensors.at("model.shared.weight").values, shared);
}

TEST_F(ConvertTest, MissingFinalLogitsBiasIsZeros) {
  CheckpointFixture f = MakeCheckpoint();
  f.Remove("final_logits_bias");
  ASSERT_TRUE(Convert(WriteCheckpoint(f)).ok());
  EXPECT_EQ(Output().tensors.at("final_logits_bias").values, std::vector<float>(12, 0.0f));
}

// ---- Nothing lost: inputs untouched, outputs never clobbered. ----

TEST_F(ConvertTest, InputDirectoryIsByteIdenticalAfterConversion) {
  CheckpointFixture f = MakeCheckpoint();
  f.SetGate(kEnc1, {1.0f, -1.0f, 1.0f, -1.0f});
  const std::string ckpt = WriteCheckpoint(f);
  const auto before = testing::Snapshot(ckpt);
  ASSERT_TRUE(Convert(ckpt, "dec.0=1").ok());
  EXPECT_EQ(testing::Snapshot(ckpt), before);
  EXPECT_EQ(testing::ListDir(dir_.path()), (std::vector<std::string>{"ckpt", "out.hwm"}));
}

TEST_F(ConvertTest, ExistingOutputIsRefusedWithoutForce) {
  const std::string ckpt = WriteCheckpoint(MakeCheckpoint());
  testing::WriteAll(dir_ / "out.hwm", "precious");
  auto r = Convert(ckpt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kIoError);
  EXPECT_NE(r.status().message().find("exists; pass --force"), std::string::npos);
  EXPECT_EQ(testing::ReadAll(dir_ / "out.hwm"), "precious");

  ASSERT_TRUE(Convert(ckpt, {}, /*force=*/true).ok());
  EXPECT_NE(testing::ReadAll(dir_ / "out.hwm"), "precious");
  EXPECT_TRUE(ReadBack(dir_ / "out.hwm").ok());
  EXPECT_EQ(testing::ListDir(dir_.path()), (std::vector<std::string>{"ckpt", "out.hwm"}));
}

TEST_F(ConvertTest, FailureLeavesAnExistingOutputUntouched) {
  CheckpointFixture f = MakeCheckpoint();
  f.Get("model.encoder.layers.1.fc1.bias").values.pop_back();
  f.Get("model.encoder.layers.1.fc1.bias").shape = {15};
  const std::string ckpt = WriteCheckpoint(f);
  testing::WriteAll(dir_ / "out.hwm", "precious");
  auto r = Convert(ckpt, {}, /*force=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(testing::ReadAll(dir_ / "out.hwm"), "precious");
  EXPECT_EQ(testing::ListDir(dir_.path()), (std::vector<std::string>{"ckpt", "out.hwm"}));
}

TEST_F(ConvertTest, OutputInsideTheCheckpointOrOnAnInputIsRefused) {
  const std::string ckpt = WriteCheckpoint(MakeCheckpoint());
  const auto before = testing::Snapshot(ckpt);
  ConvertOptions o;
  o.checkpoint_dir = ckpt;
  o.force = true;
  for (const std::string& out : {ckpt + "/model.hwm", ckpt + "/model.safetensors",
                                 ckpt + "/../ckpt/config.json", ckpt + "/sub/x.hwm"}) {
    o.output_path = out;
    auto r = ConvertCheckpoint(o);
    ASSERT_FALSE(r.ok()) << out;
    EXPECT_EQ(r.status().code(), ErrorCode::kIoError);
    EXPECT_NE(r.status().message().find("never"), std::string::npos) << r.status().message();
  }
  // A symlink elsewhere that points at an input file counts as that file.
  ASSERT_EQ(::symlink((ckpt + "/vocab.json").c_str(), (dir_ / "link.hwm").c_str()), 0);
  o.output_path = dir_ / "link.hwm";
  auto r = ConvertCheckpoint(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is the input file"), std::string::npos)
      << r.status().message();
  // The keep-heads file is an input too.
  testing::WriteAll(dir_ / "heads.txt", "enc.0=1");
  o.output_path = dir_ / "heads.txt";
  o.keep_heads = dir_ / "heads.txt";
  r = ConvertCheckpoint(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(testing::ReadAll(dir_ / "heads.txt"), "enc.0=1");
  EXPECT_EQ(testing::Snapshot(ckpt), before);
}

TEST_F(ConvertTest, SummaryFitsOneScreen) {
  CheckpointFixture f = MakeCheckpoint();
  f.SetGate(kEnc0, {1.0f, -1.0f, 1.0f, -1.0f});
  auto s = Convert(WriteCheckpoint(f));
  ASSERT_TRUE(s.ok());
  const std::string text = FormatConvertSummary(*s);
  EXPECT_NE(text.find("encoder self      2   4"), std::string::npos) << text;
  EXPECT_NE(text.find("heads    22 of 24 kept"), std::string::npos) << text;
  EXPECT_NE(text.find("sha256 " + s->source_sha256), std::string::npos);
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_LE(lines, 24u);
}

}  // namespace
}  // namespace headwise::convert
