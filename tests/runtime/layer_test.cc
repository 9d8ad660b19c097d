// Layer level: the encoder (one layer, then a stack with pruned and empty blocks) driven
// through the runtime's own RunEncoder, against the plain reference implementation.
#include <gtest/gtest.h>

#include <cmath>

#include "encoder.h"
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

}  // namespace
}  // namespace headwise
