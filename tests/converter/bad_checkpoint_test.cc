// Every way a checkpoint can be wrong: a clear message naming the file and the problem, an
// error code that maps to exit status 1, and nothing written.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>

#include "converter/src/convert.h"
#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

using testing::CheckpointFixture;

struct BadCheckpoint {
  const char* name;
  std::function<void(CheckpointFixture&)> edit;          // before writing
  std::function<void(const std::string& dir)> damage;    // after writing
  const char* message;
};

void Nothing(CheckpointFixture&) {}
void Untouched(const std::string&) {}

const std::string kQ = "model.encoder.layers.1.self_attn.q_proj.weight";

class BadCheckpointTest : public ::testing::TestWithParam<BadCheckpoint> {};

TEST_P(BadCheckpointTest, IsRejectedClearlyAndNothingIsWritten) {
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  CheckpointFixture f = testing::MakeCheckpoint();
  GetParam().edit(f);
  const std::string ckpt = dir / "ckpt";
  f.Write(ckpt);
  GetParam().damage(ckpt);
  const auto before = testing::Snapshot(ckpt);

  ConvertOptions o;
  o.checkpoint_dir = ckpt;
  o.output_path = dir / "out.hwm";
  auto r = ConvertCheckpoint(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidCheckpoint) << r.status().ToString();
  EXPECT_NE(r.status().message().find(GetParam().message), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(ckpt), std::string::npos)
      << "the message names the checkpoint: " << r.status().message();
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"ckpt"});
  EXPECT_EQ(testing::Snapshot(ckpt), before);
}

void Delete(const std::string& path) { std::remove(path.c_str()); }

INSTANTIATE_TEST_SUITE_P(
    AllPaths, BadCheckpointTest,
    ::testing::Values(
        // Missing files.
        BadCheckpoint{"MissingConfig", Nothing, [](const std::string& d) { Delete(d + "/config.json"); },
                      "missing config.json"},
        BadCheckpoint{"MissingWeights", Nothing,
                      [](const std::string& d) { Delete(d + "/model.safetensors"); },
                      "missing model.safetensors"},
        BadCheckpoint{"PytorchOnly", Nothing,
                      [](const std::string& d) {
                        Delete(d + "/model.safetensors");
                        testing::WriteAll(d + "/pytorch_model.bin", "PK");
                      },
                      "found pytorch_model.bin but no model.safetensors"},
        BadCheckpoint{"MissingVocab", Nothing, [](const std::string& d) { Delete(d + "/vocab.json"); },
                      "missing vocab.json"},
        BadCheckpoint{"MissingSourceSpm", Nothing,
                      [](const std::string& d) { Delete(d + "/source.spm"); }, "missing source.spm"},
        BadCheckpoint{"MissingTargetSpm", Nothing,
                      [](const std::string& d) { Delete(d + "/target.spm"); }, "missing target.spm"},
        BadCheckpoint{"EmptySpm", [](CheckpointFixture& f) { f.target_spm.clear(); }, Untouched,
                      "target.spm: empty file"},
        // config.json / vocab.json.
        BadCheckpoint{"UnknownActivation",
                      [](CheckpointFixture& f) { f.config["activation_function"] = "tanh"; },
                      Untouched, "config.json: activation_function: unsupported activation 'tanh'"},
        BadCheckpoint{"ConfigNotJson", Nothing,
                      [](const std::string& d) { testing::WriteAll(d + "/config.json", "{d_model"); },
                      "config.json: invalid JSON"},
        BadCheckpoint{"VocabWithoutUnk", [](CheckpointFixture& f) {
                        f.vocab.erase("<unk>");
                        f.vocab["x"] = 1;
                      },
                      Untouched, "vocab.json: expected a piece \"<unk>\""},
        // Wrong shapes and missing or extra tensors.
        BadCheckpoint{"WrongShape",
                      [](CheckpointFixture& f) {
                        f.Get(kQ).shape = {4, 8};
                        f.Get(kQ).values.resize(32);
                      },
                      Untouched,
                      "model.safetensors: model.encoder.layers.1.self_attn.q_proj.weight: "
                      "expected [8, 8], found [4, 8]"},
        BadCheckpoint{"MissingTensor",
                      [](CheckpointFixture& f) { f.Remove("model.decoder.layers.1.fc2.bias"); },
                      Untouched, "model.decoder.layers.1.fc2.bias: missing (expected shape [8])"},
        BadCheckpoint{"UntiedWithoutLmHead",
                      [](CheckpointFixture& f) { f.config["tie_word_embeddings"] = false; },
                      Untouched, "lm_head.weight: missing (expected shape [12, 8])"},
        BadCheckpoint{"UnknownTensor",
                      [](CheckpointFixture& f) {
                        f.tensors.push_back({"model.encoder.layernorm_embedding.weight", {8},
                                             std::vector<float>(8, 1.0f), "F32"});
                      },
                      Untouched,
                      "1 tensor(s) not used by this config (unknown names, or parts the config "
                      "does not have): model.encoder.layernorm_embedding.weight [8]"},
        BadCheckpoint{"TiedLmHeadDiffers",
                      [](CheckpointFixture& f) {
                        testing::FixtureTensor lm = f.Get("model.shared.weight");
                        lm.name = "lm_head.weight";
                        lm.values[5] += 1.0f;
                        f.tensors.push_back(lm);
                      },
                      Untouched,
                      "lm_head.weight: differs from model.shared.weight, but the config says they "
                      "are the same tensor (tie_word_embeddings is true)"},
        BadCheckpoint{"WrongPositions",
                      [](CheckpointFixture& f) {
                        std::vector<float> pos = testing::ReferenceSinusoids(16, 8);
                        pos[3 * 8 + 1] += 0.01f;
                        f.tensors.push_back({"model.decoder.embed_positions.weight", {16, 8}, pos, "F32"});
                      },
                      Untouched,
                      "model.decoder.embed_positions.weight: not the sinusoidal position table "
                      "the runtime computes: at position 3, dim 1"},
        BadCheckpoint{"NonFiniteWeight",
                      [](CheckpointFixture& f) { f.Get(kQ).values[3] = std::nanf(""); },
                      Untouched, "q_proj.weight: expected finite values, found nan at flat index 3"},
        // Gates.
        BadCheckpoint{"GateWrongSize",
                      [](CheckpointFixture& f) {
                        f.SetGate("model.decoder.layers.1.encoder_attn", {1.0f, 1.0f, 1.0f});
                      },
                      Untouched,
                      "model.decoder.layers.1.encoder_attn.head_gate.log_alpha (decoder "
                      "cross-attention layer 1): gate of the wrong size: expected [4] (one "
                      "log_alpha per head), found [3]"},
        BadCheckpoint{"GateForMissingBlock",
                      [](CheckpointFixture& f) {
                        f.SetGate("model.encoder.layers.2.self_attn", {1.0f, 1.0f, 1.0f, 1.0f});
                      },
                      Untouched,
                      "model.encoder.layers.2.self_attn.head_gate.log_alpha [4] (a gate for an "
                      "attention block this config does not have)"},
        BadCheckpoint{"GateNotFinite",
                      [](CheckpointFixture& f) {
                        f.SetGate("model.encoder.layers.0.self_attn", {1.0f, INFINITY, 1.0f, 1.0f});
                      },
                      Untouched, "head 1: expected a finite log_alpha, found inf"},
        // Corrupt safetensors.
        BadCheckpoint{"CorruptHeaderLength", Nothing,
                      [](const std::string& d) {
                        std::string s = testing::ReadAll(d + "/model.safetensors");
                        s[5] = '\x7f';
                        testing::WriteAll(d + "/model.safetensors", s);
                      },
                      "model.safetensors: corrupt header: header length"},
        BadCheckpoint{"CorruptHeaderJson", Nothing,
                      [](const std::string& d) {
                        std::string s = testing::ReadAll(d + "/model.safetensors");
                        s[8] = '[';
                        testing::WriteAll(d + "/model.safetensors", s);
                      },
                      "model.safetensors header: invalid JSON"},
        BadCheckpoint{"TruncatedWeights", Nothing,
                      [](const std::string& d) {
                        std::string s = testing::ReadAll(d + "/model.safetensors");
                        s.resize(s.size() - 10);
                        testing::WriteAll(d + "/model.safetensors", s);
                      },
                      "beyond the data region"},
        BadCheckpoint{"UnsupportedDType",
                      [](CheckpointFixture& f) { f.Get(kQ).dtype = "F16"; },
                      [](const std::string& d) {
                        // Rename the dtype in place: "F16" -> "I16" keeps every offset.
                        std::string s = testing::ReadAll(d + "/model.safetensors");
                        const size_t at = s.find("\"F16\"");
                        s[at + 1] = 'I';
                        testing::WriteAll(d + "/model.safetensors", s);
                      },
                      "unsupported dtype 'I16'; expected F32, F16 or BF16"}),
    [](const ::testing::TestParamInfo<BadCheckpoint>& param) { return param.param.name; });

TEST(BadCheckpoint, NotADirectory) {
  ConvertOptions o;
  testing::TempDir dir;
  o.checkpoint_dir = dir / "nope";
  o.output_path = dir / "out.hwm";
  auto r = ConvertCheckpoint(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a checkpoint directory"), std::string::npos);
  EXPECT_TRUE(testing::ListDir(dir.path()).empty());
}

}  // namespace
}  // namespace headwise::convert
