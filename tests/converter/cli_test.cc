// The headwise-convert command line, driven in-process through RunConvertCli (main.cc only
// forwards to it): exit codes, messages, inspect output.
#include "converter/src/cli.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunConvertCli(args, out, err);
  return {code, out.str(), err.str()};
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    testing::CheckpointFixture f = testing::MakeCheckpoint();
    f.SetGate("model.encoder.layers.1.self_attn", {0.5f, -0.5f, 2.0f, -1.0f});
    f.SetGate("model.decoder.layers.0.self_attn", {-1.0f, -1.0f, -1.0f, -1.0f});
    f.Write(ckpt_);
  }
  testing::TempDir dir_;
  const std::string ckpt_ = dir_ / "ckpt";
  const std::string out_ = dir_ / "m.hwm";
};

TEST_F(CliTest, HelpVersionAndUsageErrors) {
  CliRun help = Cli({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("headwise-convert CHECKPOINT_DIR -o MODEL.hwm"), std::string::npos);
  EXPECT_NE(help.out.find("Exit status"), std::string::npos);
  EXPECT_EQ(Cli({"inspect", "-h"}).code, 0);
  CliRun version = Cli({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, std::string("headwise-convert ") + HEADWISE_VERSION + "\n");

  EXPECT_EQ(Cli({}).code, kExitUsage);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{ckpt_},
                                             {ckpt_, "-o"},
                                             {"-o", out_},
                                             {ckpt_, "-o", out_, "--frobnicate"},
                                             {ckpt_, ckpt_, "-o", out_},
                                             {"inspect"},
                                             {"inspect", out_, "--xml"},
                                             {"inspect", out_, out_}}) {
    CliRun r = Cli(args);
    EXPECT_EQ(r.code, kExitUsage) << args.size();
    EXPECT_NE(r.err.find("headwise-convert"), std::string::npos);
  }
  EXPECT_EQ(testing::ListDir(dir_.path()), std::vector<std::string>{"ckpt"});
}

TEST_F(CliTest, ConvertPrintsASummaryAndInspectJsonReportsTheHeads) {
  CliRun convert = Cli({ckpt_, "--output=" + out_});
  ASSERT_EQ(convert.code, 0) << convert.err;
  EXPECT_NE(convert.out.find("headwise-convert: ckpt -> " + out_), std::string::npos);
  EXPECT_NE(convert.out.find("decoder self      0   4"), std::string::npos) << convert.out;

  CliRun inspect = Cli({"inspect", out_, "--json"});
  ASSERT_EQ(inspect.code, 0) << inspect.err;
  const nlohmann::json j = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(j["format_version"], 1);
  EXPECT_EQ(j["config"]["d_model"], 8);
  EXPECT_EQ(j["config"]["activation"], "swish");
  ASSERT_EQ(j["attention"].size(), 6u);
  EXPECT_EQ(j["attention"][1]["block"], "model.encoder.layers.1.self_attn");
  EXPECT_EQ(j["attention"][1]["kept_heads"], nlohmann::json({0, 2}));
  EXPECT_EQ(j["attention"][1]["gate_log_alpha"], nlohmann::json({0.5, -0.5, 2.0, -1.0}));
  EXPECT_EQ(j["attention"][2]["kind"], "decoder_self");
  EXPECT_EQ(j["attention"][2]["num_heads"], 0);
  EXPECT_EQ(j["attention"][0]["gate_log_alpha"], nlohmann::json::array());
  EXPECT_EQ(j["heads"]["kept"], 4 + 2 + 0 + 4 + 4 + 4);
  EXPECT_EQ(j["heads"]["total"], 24);
  EXPECT_EQ(j["tokenizer"]["vocab_size"], 12);
  EXPECT_EQ(j["tokenizer"]["target_spm_bytes"], 16);
  EXPECT_EQ(j["provenance"]["source_checkpoint_name"], "ckpt");
  EXPECT_EQ(j["provenance"]["source_dtype"], "F32");
  EXPECT_EQ(j["provenance"]["source_checkpoint_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["data"]["checksum_ok"], true);
  EXPECT_GT(j["tensors"]["count"].get<int>(), 0);

  CliRun text = Cli({"inspect", out_});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("model.encoder.layers.1.self_attn: 2/4 [0,2] gates 0.5 -0.5 2 -1"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("model.decoder.layers.0.self_attn: 0/4 []"), std::string::npos);
}

TEST_F(CliTest, ExitCodesForBadInput) {
  CliRun missing = Cli({dir_ / "nope", "-o", out_});
  EXPECT_EQ(missing.code, kExitInvalidInput);
  EXPECT_NE(missing.err.find("not a checkpoint directory"), std::string::npos);
  EXPECT_NE(missing.err.find("nothing was written"), std::string::npos);

  CliRun spec = Cli({ckpt_, "-o", out_, "--keep-heads", "enc.0=9"});
  EXPECT_EQ(spec.code, kExitUsage);
  EXPECT_NE(spec.err.find("head 9 out of range"), std::string::npos) << spec.err;
  EXPECT_EQ(testing::ListDir(dir_.path()), std::vector<std::string>{"ckpt"});

  CliRun no_file = Cli({ckpt_, "-o", out_, "--keep-heads", dir_ / "heads.txt"});
  EXPECT_EQ(no_file.code, kExitUsage);
  EXPECT_NE(no_file.err.find("is neither a file nor an inline spec"), std::string::npos)
      << no_file.err;

  ASSERT_EQ(Cli({ckpt_, "-o", out_}).code, 0);
  CliRun again = Cli({ckpt_, "-o", out_});
  EXPECT_EQ(again.code, kExitInvalidInput);
  EXPECT_NE(again.err.find("exists; pass --force"), std::string::npos);
  EXPECT_EQ(Cli({ckpt_, "-o", out_, "--force", "--keep-heads=*.*=all"}).code, 0);

  CliRun inside = Cli({ckpt_, "-o", ckpt_ + "/m.hwm"});
  EXPECT_EQ(inside.code, kExitInvalidInput);
}

TEST_F(CliTest, InspectRejectsDamagedFiles) {
  ASSERT_EQ(Cli({ckpt_, "-o", out_}).code, 0);
  const std::string good = testing::ReadAll(out_);

  std::string flipped = good;
  flipped[flipped.size() - 70] ^= 0x40;  // inside the data segment
  testing::WriteAll(dir_ / "flipped.hwm", flipped);
  CliRun r = Cli({"inspect", dir_ / "flipped.hwm"});
  EXPECT_EQ(r.code, kExitInvalidInput);
  EXPECT_NE(r.err.find("CHECKSUM_MISMATCH"), std::string::npos) << r.err;

  testing::WriteAll(dir_ / "short.hwm", good.substr(0, good.size() / 3));
  r = Cli({"inspect", dir_ / "short.hwm"});
  EXPECT_EQ(r.code, kExitInvalidInput);
  EXPECT_NE(r.err.find("short.hwm"), std::string::npos) << r.err;

  std::string wrong_id = good;
  wrong_id[8] = 'X';
  testing::WriteAll(dir_ / "id.hwm", wrong_id);
  r = Cli({"inspect", dir_ / "id.hwm"});
  EXPECT_EQ(r.code, kExitInvalidInput);
  EXPECT_NE(r.err.find("not a headwise model"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace headwise::convert
