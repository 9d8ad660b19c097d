#include "converter/src/config_reader.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tests/converter/checkpoint_fixture.h"

namespace headwise::convert {
namespace {

Result<ModelConfig> Parse(const nlohmann::json& j) { return ParseMarianConfig(j.dump(), "c.json"); }

TEST(ConfigReader, ReadsTheMarianKeys) {
  auto r = Parse(testing::MakeCheckpoint().config);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->d_model, 8u);
  EXPECT_EQ(r->encoder_layers, 2u);
  EXPECT_EQ(r->decoder_layers, 2u);
  EXPECT_EQ(r->encoder_attention_heads, 4u);
  EXPECT_EQ(r->decoder_attention_heads, 4u);
  EXPECT_EQ(r->encoder_ffn_dim, 16u);
  EXPECT_EQ(r->decoder_ffn_dim, 12u);
  EXPECT_EQ(r->vocab_size, 12u);
  EXPECT_TRUE(r->share_encoder_decoder_embeddings);
  EXPECT_TRUE(r->tie_word_embeddings);
  EXPECT_EQ(r->activation, Activation::kSwish);
  EXPECT_EQ(r->max_position_embeddings, 16u);
  EXPECT_EQ(r->pad_token_id, 11);
  EXPECT_EQ(r->eos_token_id, 0);
  EXPECT_EQ(r->decoder_start_token_id, 11);
  EXPECT_TRUE(r->scale_embedding);
}

TEST(ConfigReader, DefaultsAndActivationNames) {
  nlohmann::json j = testing::MakeCheckpoint().config;
  for (const char* key : {"scale_embedding", "share_encoder_decoder_embeddings",
                          "tie_word_embeddings", "normalize_before", "model_type",
                          "decoder_vocab_size"}) {
    j.erase(key);
  }
  for (const auto& [name, act] : {std::pair<const char*, Activation>{"silu", Activation::kSwish},
                                  {"swish", Activation::kSwish},
                                  {"relu", Activation::kRelu},
                                  {"gelu", Activation::kGelu}}) {
    j["activation_function"] = name;
    auto r = Parse(j);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->activation, act) << name;
    EXPECT_FALSE(r->scale_embedding);
    EXPECT_TRUE(r->share_encoder_decoder_embeddings);
    EXPECT_TRUE(r->tie_word_embeddings);
  }
}

struct BadConfig {
  const char* name;
  std::function<void(nlohmann::json&)> mutate;
  const char* message;
};

class ConfigRejects : public ::testing::TestWithParam<BadConfig> {};

TEST_P(ConfigRejects, WithAClearMessage) {
  nlohmann::json j = testing::MakeCheckpoint().config;
  GetParam().mutate(j);
  auto r = Parse(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(r.status().message().find(GetParam().message), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().rfind("c.json: ", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, ConfigRejects,
    ::testing::Values(
        BadConfig{"MissingDModel", [](nlohmann::json& j) { j.erase("d_model"); },
                  "missing key 'd_model'"},
        BadConfig{"ZeroLayers", [](nlohmann::json& j) { j["encoder_layers"] = 0; },
                  "encoder_layers: expected an integer in [1, 4294967295], found 0"},
        BadConfig{"StringHeads", [](nlohmann::json& j) { j["decoder_attention_heads"] = "4"; },
                  "decoder_attention_heads: expected an integer"},
        BadConfig{"FloatFfn", [](nlohmann::json& j) { j["encoder_ffn_dim"] = 16.5; },
                  "encoder_ffn_dim: expected an integer"},
        BadConfig{"BoolAsInt", [](nlohmann::json& j) { j["vocab_size"] = true; },
                  "vocab_size: expected an integer"},
        BadConfig{"UnknownActivation",
                  [](nlohmann::json& j) { j["activation_function"] = "gelu_new"; },
                  "unsupported activation 'gelu_new'; expected relu, swish, gelu or silu (swish)"},
        BadConfig{"MissingActivation", [](nlohmann::json& j) { j.erase("activation_function"); },
                  "missing key 'activation_function'"},
        BadConfig{"NormalizeBefore", [](nlohmann::json& j) { j["normalize_before"] = true; },
                  "normalize_before: true (pre-LayerNorm layers) is not supported"},
        BadConfig{"BoolNotBool", [](nlohmann::json& j) { j["tie_word_embeddings"] = 1; },
                  "tie_word_embeddings: expected true or false, found 1"},
        BadConfig{"PadOutOfVocab", [](nlohmann::json& j) { j["pad_token_id"] = 12; },
                  "pad_token_id: expected an integer in [0, 11], found 12"},
        BadConfig{"EosNegative", [](nlohmann::json& j) { j["eos_token_id"] = -1; },
                  "eos_token_id: expected an integer in [0, 11], found -1"},
        BadConfig{"HeadsDoNotDivide", [](nlohmann::json& j) { j["encoder_attention_heads"] = 3; },
                  "encoder_attention_heads: expected a divisor of d_model 8, found 3"},
        BadConfig{"OddDModel",
                  [](nlohmann::json& j) {
                    j["d_model"] = 9;
                    j["encoder_attention_heads"] = 3;
                    j["decoder_attention_heads"] = 3;
                  },
                  "d_model: expected an even value"},
        BadConfig{"ModelType", [](nlohmann::json& j) { j["model_type"] = "bart"; },
                  "model_type: expected \"marian\", found \"bart\""},
        BadConfig{"DecoderVocab", [](nlohmann::json& j) { j["decoder_vocab_size"] = 30; },
                  "decoder_vocab_size: expected 12"},
        BadConfig{"NotAnObject", [](nlohmann::json& j) { j = nlohmann::json::array(); },
                  "expected a JSON object, found an array"}),
    [](const ::testing::TestParamInfo<BadConfig>& param) { return param.param.name; });

TEST(ConfigReader, RejectsInvalidJsonAndDuplicateKeys) {
  auto bad = ParseMarianConfig("{\"d_model\": 8,", "c.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("c.json: invalid JSON"), std::string::npos);
  auto dup = ParseMarianConfig(R"({"d_model": 8, "d_model": 16})", "c.json");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate key 'd_model'"), std::string::npos);
}

}  // namespace
}  // namespace headwise::convert
