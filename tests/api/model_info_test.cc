// ModelInfo's description of a file (headwise.hpp) and its C view (hw_model_get_info,
// hw_model_get_attention_block): gates, per-head analysis with NaN statistics and roles, the
// analysis source, provenance, format version and the weight format of each --weights choice.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "format/model_writer.h"
#include "format/weight_format.h"
#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/test_model.h"

namespace headwise {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The random test model with a gate per source head, an analysis of every source head and
// provenance, as the converter writes them for an analysed, gated checkpoint.
ModelSpec DescribedSpec() {
  ModelSpec spec = testing::RandomModelSpec(nullptr, nullptr);
  spec.gate_log_alpha.clear();
  spec.head_analysis.clear();
  for (size_t b = 0; b < spec.blocks.size(); ++b) {
    const uint32_t heads = spec.blocks[b].original_num_heads;
    std::vector<float> gates;
    std::vector<HeadAnalysisSpec> analysis;
    for (uint32_t h = 0; h < heads; ++h) {
      gates.push_back(0.25f * static_cast<float>(b) - 0.5f * static_cast<float>(h));
      HeadAnalysisSpec a;
      a.source_head = h;
      a.relevance = 1.0f / static_cast<float>(heads);
      a.confidence = h == 0 ? kNaN : 0.1f * static_cast<float>(h);
      a.michel = 0.01f * static_cast<float>(b + h);
      if (h == 1) a.roles = {"positional", "syntactic:nsubj"};
      analysis.push_back(a);
    }
    spec.gate_log_alpha.push_back(gates);
    spec.head_analysis.push_back(analysis);
  }
  spec.analysis_info = {"attnlrp", "dev, 500 sentences", std::string(64, 'a')};
  spec.source_checkpoint_sha256 = std::string(64, 'b');
  spec.source_checkpoint_name = "checkpoint";
  spec.keep_heads_spec = "enc.0=none";
  spec.source_dtype = "F16";
  return spec;
}

class ModelInfoTest : public ::testing::Test {
 protected:
  // Writes `spec` into the scratch dir and loads it through both APIs.
  void Load(const ModelSpec& spec) {
    path_ = dir_ / "described.hwm";
    AtomicWriteOptions overwrite;
    overwrite.overwrite = true;
    const Status written = WriteModelFile(spec, path_, overwrite);
    ASSERT_TRUE(written.ok()) << written.ToString();
    auto m = Model::Load(path_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = std::move(m).value();
    hw_model_free(c_model_);
    c_model_ = nullptr;
    ASSERT_EQ(hw_model_load(path_.c_str(), nullptr, &c_model_), HW_OK) << hw_last_error_message();
  }
  void TearDown() override { hw_model_free(c_model_); }

  testing::ScratchDir dir_;
  std::string path_;
  std::shared_ptr<const Model> model_;
  hw_model* c_model_ = nullptr;
};

TEST_F(ModelInfoTest, GatesAnalysisAndProvenanceAreTheFiles) {
  const ModelSpec spec = DescribedSpec();
  Load(spec);
  const ModelInfo& info = model_->info();
  EXPECT_EQ(info.weight_format, "fp32");
  EXPECT_FALSE(info.has_tokenizer);
  EXPECT_GT(info.format_version, 0);
  EXPECT_EQ(info.source_checkpoint_sha256, spec.source_checkpoint_sha256);
  EXPECT_EQ(info.source_checkpoint_name, "checkpoint");
  EXPECT_EQ(info.keep_heads_spec, "enc.0=none");
  EXPECT_EQ(info.source_dtype, "F16");
  EXPECT_FALSE(info.converter_version.empty());
  EXPECT_EQ(info.analysis_rule, "attnlrp");
  EXPECT_EQ(info.analysis_data, "dev, 500 sentences");
  EXPECT_EQ(info.analysis_sha256, spec.analysis_info.analysis_sha256);
  ASSERT_EQ(info.attention.size(), spec.blocks.size());
  for (size_t b = 0; b < spec.blocks.size(); ++b) {
    const AttentionBlockInfo& a = info.attention[b];
    EXPECT_EQ(a.name, BlockPrefix(spec.blocks[b].kind, spec.blocks[b].layer));
    EXPECT_EQ(std::vector<uint32_t>(a.kept_heads.begin(), a.kept_heads.end()),
              spec.blocks[b].kept_heads);
    EXPECT_EQ(a.gate_log_alpha, spec.gate_log_alpha[b]);
    ASSERT_EQ(a.analysis.size(), spec.head_analysis[b].size());
    for (size_t h = 0; h < a.analysis.size(); ++h) {
      const HeadAnalysisInfo& got = a.analysis[h];
      const HeadAnalysisSpec& want = spec.head_analysis[b][h];
      EXPECT_EQ(got.source_head, static_cast<int>(h));
      EXPECT_EQ(got.relevance, want.relevance);
      EXPECT_EQ(std::isnan(got.confidence), std::isnan(want.confidence));
      if (!std::isnan(want.confidence)) {
        EXPECT_EQ(got.confidence, want.confidence);
      }
      EXPECT_EQ(got.michel, want.michel);
      EXPECT_EQ(got.roles, want.roles);
    }
  }
}

TEST_F(ModelInfoTest, TheCViewIsTheCppInfo) {
  Load(DescribedSpec());
  const ModelInfo& info = model_->info();
  hw_model_info c;
  ASSERT_EQ(hw_model_get_info(c_model_, &c), HW_OK);
  EXPECT_EQ(c.d_model, info.d_model);
  EXPECT_EQ(c.vocab_size, info.vocab_size);
  EXPECT_EQ(c.max_position_embeddings, info.max_position_embeddings);
  EXPECT_EQ(c.decoder_start_token_id, info.decoder_start_token_id);
  EXPECT_STREQ(c.activation, info.activation.c_str());
  EXPECT_STREQ(c.weight_format, "fp32");
  EXPECT_EQ(c.has_tokenizer, 0);
  EXPECT_EQ(c.format_version, info.format_version);
  EXPECT_EQ(c.num_attention_blocks, info.attention.size());
  EXPECT_EQ(c.file_bytes, info.file_bytes);
  EXPECT_EQ(c.weight_bytes, info.weight_bytes);
  EXPECT_STREQ(c.keep_heads_spec, "enc.0=none");
  EXPECT_STREQ(c.converter_version, info.converter_version.c_str());
  EXPECT_STREQ(c.analysis_rule, "attnlrp");
  EXPECT_STREQ(c.analysis_sha256, info.analysis_sha256.c_str());
  for (size_t b = 0; b < info.attention.size(); ++b) {
    const AttentionBlockInfo& a = info.attention[b];
    hw_attention_block cb;
    ASSERT_EQ(hw_model_get_attention_block(c_model_, b, &cb), HW_OK);
    EXPECT_EQ(static_cast<int>(cb.kind), static_cast<int>(a.kind));
    EXPECT_EQ(cb.layer, a.layer);
    EXPECT_STREQ(cb.name, a.name.c_str());
    EXPECT_EQ(cb.num_heads, a.num_heads);
    EXPECT_EQ(cb.original_num_heads, a.original_num_heads);
    EXPECT_EQ(cb.head_dim, a.head_dim);
    if (a.num_heads == 0) {
      EXPECT_EQ(cb.kept_heads, nullptr);
    }
    for (int h = 0; h < a.num_heads; ++h) EXPECT_EQ(cb.kept_heads[h], a.kept_heads[h]);
    ASSERT_NE(cb.gate_log_alpha, nullptr);
    ASSERT_NE(cb.analysis, nullptr);
    for (int h = 0; h < a.original_num_heads; ++h) {
      EXPECT_EQ(cb.gate_log_alpha[h], a.gate_log_alpha[h]);
      const hw_head_analysis& e = cb.analysis[h];
      EXPECT_EQ(e.source_head, h);
      EXPECT_EQ(e.relevance, a.analysis[h].relevance);
      EXPECT_EQ(std::isnan(e.confidence), std::isnan(a.analysis[h].confidence));
      ASSERT_EQ(e.num_roles, a.analysis[h].roles.size());
      for (size_t r = 0; r < e.num_roles; ++r) EXPECT_STREQ(e.roles[r], a.analysis[h].roles[r].c_str());
    }
  }
  hw_attention_block cb;
  EXPECT_EQ(hw_model_get_attention_block(c_model_, info.attention.size(), &cb),
            HW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hw_last_error_message(), "blocks"), nullptr);
  EXPECT_EQ(hw_model_get_info(nullptr, &c), HW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hw_model_get_attention_block(c_model_, 0, nullptr), HW_ERR_INVALID_ARGUMENT);
}

TEST_F(ModelInfoTest, WithoutGatesOrAnalysisThePointersAreNull) {
  ModelSpec spec = testing::RandomModelSpec(nullptr, nullptr);
  spec.gate_log_alpha.clear();
  spec.head_analysis.clear();
  spec.analysis_info = {};
  Load(spec);
  hw_model_info c;
  ASSERT_EQ(hw_model_get_info(c_model_, &c), HW_OK);
  EXPECT_STREQ(c.analysis_rule, "");
  EXPECT_STREQ(c.analysis_sha256, "");
  for (size_t b = 0; b < c.num_attention_blocks; ++b) {
    hw_attention_block cb;
    ASSERT_EQ(hw_model_get_attention_block(c_model_, b, &cb), HW_OK);
    EXPECT_EQ(cb.gate_log_alpha, nullptr);
    EXPECT_EQ(cb.analysis, nullptr);
    EXPECT_TRUE(model_->info().attention[b].analysis.empty());
  }
}

TEST_F(ModelInfoTest, WeightFormatNamesTheMatricesType) {
  const std::vector<std::pair<WeightFormat, const char*>> formats = {
      {WeightFormat::kF32, "fp32"}, {WeightFormat::kF16, "fp16"},
      {WeightFormat::kI8, "int8"}};
  for (const auto& [format, name] : formats) {
    ModelSpec spec = testing::RandomModelSpec(nullptr, nullptr);
    ApplyWeightFormat(format, &spec);
    Load(spec);
    EXPECT_EQ(model_->info().weight_format, name);
  }
  ModelSpec mixed = testing::RandomModelSpec(nullptr, nullptr);
  ApplyWeightFormat(WeightFormat::kI8, &mixed);
  for (TensorSpec& t : mixed.tensors) {
    if (t.name == "model.encoder.layers.0.fc1.weight") t.dtype = DType::kF16;
  }
  Load(mixed);
  EXPECT_EQ(model_->info().weight_format, "mixed");
}

}  // namespace
}  // namespace headwise
