// Layer level: the encoder (one layer, then a stack with pruned and empty blocks) driven
// through the runtime's own RunEncoder, against the plain reference implementation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/half.h"
#include "encoder.h"
#include "layer_common.h"
#include "tests/runtime/reference_model.h"
#include "tests/runtime/test_model.h"
#include "translator_impl.h"

namespace headwise {
namespace {

using testing::ModelOptions;

void CheckEncoder(const ModelOptions& o, const std::vector<std::vector<int32_t>>& sources) {
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  TranslatorLimits limits;
  limits.max_batch = 4;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 8;
  auto impl = CreateTranslatorImpl(tm->model, limits);
  ASSERT_TRUE(impl.ok()) << impl.status().ToString();
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  ASSERT_TRUE(RunEncoder((*impl)->net, (*impl)->buf.encoder, spans.data(), spans.size()).ok());

  const testing::ReferenceModel ref(tm->spec);
  const size_t d = o.d_model;
  size_t row = 0;
  for (size_t s = 0; s < sources.size(); ++s) {
    const testing::Matrix want = ref.Encode(sources[s]);
    for (size_t i = 0; i < sources[s].size() * d; ++i) {
      ASSERT_NEAR((*impl)->buf.encoder.x[row * d + i], want[i], 2e-5) << "sentence " << s << " value " << i;
    }
    row += sources[s].size();
  }
}

TEST(EncoderLayerTest, OneLayerMatchesReference) {
  ModelOptions o;
  o.encoder_layers = 1;
  CheckEncoder(o, {testing::RandomSource(o, 9, 1)});
}

TEST(EncoderLayerTest, OneLayerWithPrunedHeadsAndReluMatchesReference) {
  ModelOptions o;
  o.encoder_layers = 1;
  o.activation = Activation::kRelu;
  o.kept = {{1, 3}};
  CheckEncoder(o, {testing::RandomSource(o, 6, 2)});
}

TEST(EncoderLayerTest, ZeroHeadLayerIsBiasOnlyMath) {
  ModelOptions o;
  o.encoder_layers = 1;
  o.activation = Activation::kGelu;
  o.kept = {{}};
  CheckEncoder(o, {testing::RandomSource(o, 5, 3)});
}

TEST(EncoderLayerTest, PackedBatchOfUnequalSentencesMatchesEachAlone) {
  ModelOptions o;
  o.encoder_layers = 3;
  o.kept = {{0, 1, 2, 3}, {2}, {}};
  CheckEncoder(o, {testing::RandomSource(o, 7, 4), testing::RandomSource(o, 1, 5),
                   testing::RandomSource(o, 16, 6), testing::RandomSource(o, 3, 7)});
}

// Embeddings of a dtype without its own kernel go through WeightView::WidenRow
// (EmbedTokensWidened); on the dtypes that have kernels both give the same floats.
TEST(EmbedTokens, WidenedRowsMatchEachDTypesKernel) {
  const size_t vocab = 5, dim = 7;
  std::vector<float> f32(vocab * dim), scales(vocab), positions(3 * dim);
  std::vector<uint16_t> f16(vocab * dim);
  std::vector<int8_t> i8(vocab * dim);
  for (size_t i = 0; i < f32.size(); ++i) {
    f32[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
    f16[i] = FloatToF16(f32[i]);
    i8[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  }
  for (size_t r = 0; r < vocab; ++r) scales[r] = 0.01f * static_cast<float>(r + 1);
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = std::cos(0.11f * i);
  const std::vector<int32_t> ids = {4, 0, 2};
  auto view = [&](DType dtype, const void* data) {
    WeightView w;
    w.data = data;
    w.dtype = dtype;
    w.rows = vocab;
    w.cols = dim;
    w.scale = dtype == DType::kI8 ? scales.data() : nullptr;
    return w;
  };
  for (const WeightView& w : {view(DType::kF32, f32.data()), view(DType::kF16, f16.data()),
                              view(DType::kI8, i8.data())}) {
    for (size_t stride : {dim, size_t{0}}) {
      std::vector<float> kernel(ids.size() * dim), widened(ids.size() * dim, -1.0f);
      EmbedTokens(w, ids.data(), ids.size(), dim, 2.5f, positions.data(), stride, kernel.data());
      EmbedTokensWidened(w, ids.data(), ids.size(), dim, 2.5f, positions.data(), stride,
                         widened.data());
      EXPECT_EQ(widened, kernel) << DTypeName(w.dtype) << " stride " << stride;
    }
  }
  // What WidenRow decodes: I8 as q * row scale, F16 exactly.
  float row[dim];
  view(DType::kI8, i8.data()).WidenRow(3, row);
  EXPECT_EQ(row[1], static_cast<float>(i8[3 * dim + 1]) * scales[3]);
  view(DType::kF16, f16.data()).WidenRow(1, row);
  EXPECT_EQ(row[2], F16ToFloat(f16[dim + 2]));
}

}  // namespace
}  // namespace headwise
