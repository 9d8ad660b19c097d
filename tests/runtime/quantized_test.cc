// The fp16 and int8 weight formats in the runtime: the int8 kernel against plain loops (the
// dispatched SIMD kernel must give the reference's exact integers; both must be close to the
// float product), loading and checking I8/F16 files, and whole-model agreement with the fp32
// model (teacher-forced logits and greedy ids), parametrised over format and thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/int8_gemm.h"
#include "tests/runtime/test_model.h"
#include "tests/support/random_data.h"

namespace headwise {
namespace {

using testing::RandomFloats;

struct GemmCase {
  size_t rows, k, out;
};

class Int8GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(Int8GemmTest, DispatchedKernelMatchesReferenceAndFloatProduct) {
  const GemmCase c = GetParam();
  const size_t x_stride = c.k + 3, y_stride = c.out + 5;
  const std::vector<float> x = RandomFloats(c.rows * x_stride, 1, 2.0f);
  const std::vector<float> wf = RandomFloats(c.out * c.k, 2, 0.3f);
  const std::vector<float> bias = RandomFloats(c.out, 3, 0.5f);
  // Per-row int8 weights as the converter writes them.
  std::vector<int8_t> w(c.out * c.k);
  std::vector<float> w_scale(c.out);
  for (size_t o = 0; o < c.out; ++o) {
    float m = 0;
    for (size_t i = 0; i < c.k; ++i) m = std::max(m, std::fabs(wf[o * c.k + i]));
    w_scale[o] = m / 127.0f;
    for (size_t i = 0; i < c.k; ++i) w[o * c.k + i] = static_cast<int8_t>(std::lrint(wf[o * c.k + i] / w_scale[o]));
  }
  std::vector<int8_t> xq(c.rows * c.k);
  std::vector<float> x_scale(c.rows);
  kernels::QuantizeRowsDynamic(x.data(), c.rows, c.k, x_stride, xq.data(), x_scale.data());
  for (size_t r = 0; r < c.rows; ++r) {
    for (size_t i = 0; i < c.k; ++i) {
      ASSERT_LE(std::fabs(xq[r * c.k + i] * x_scale[r] - x[r * x_stride + i]), 0.5f * x_scale[r] * 1.001f);
    }
  }
  kernels::Int8GemmArgs a;
  a.xq = xq.data();
  a.x_scale = x_scale.data();
  a.rows = c.rows;
  a.k = c.k;
  a.w = w.data();
  a.w_scale = w_scale.data();
  a.bias = bias.data();
  a.y_stride = y_stride;
  a.out_min = -1e30f;
  a.out_max = 1e30f;
  std::vector<float> got(c.rows * y_stride, -7.0f), want(c.rows * y_stride, -7.0f);
  a.y = got.data();
  // Two ranges, as two threads would split it (the split need not be a multiple of 4).
  kernels::Int8Gemm(a, 0, c.out / 2);
  kernels::Int8Gemm(a, c.out / 2, c.out);
  a.y = want.data();
  kernels::Int8GemmReference(a, 0, c.out);
  ASSERT_EQ(got, want) << "kernel " << kernels::Int8GemmKernelName();
  for (size_t r = 0; r < c.rows; ++r) {
    for (size_t o = 0; o < c.out; ++o) {
      double exact = bias[o], bound = 0;
      for (size_t i = 0; i < c.k; ++i) {
        exact += static_cast<double>(x[r * x_stride + i]) * wf[o * c.k + i];
        // |x w - xq wq| <= |x| dw + |w| dx + dx dw with dx, dw at most half a step.
        bound += std::fabs(x[r * x_stride + i]) * 0.5 * w_scale[o] +
                 std::fabs(wf[o * c.k + i]) * 0.5 * x_scale[r] + 0.25 * w_scale[o] * x_scale[r];
      }
      ASSERT_NEAR(got[r * y_stride + o], exact, bound * 1.01 + 1e-5) << "row " << r << " out " << o;
    }
    EXPECT_EQ(got[r * y_stride + c.out], -7.0f) << "wrote past the row";
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8GemmTest,
                         ::testing::Values(GemmCase{1, 256, 64}, GemmCase{3, 96, 13},
                                           GemmCase{20, 1024, 36}, GemmCase{2, 7, 5},
                                           GemmCase{5, 33, 4}));

TEST(Int8Gemm, DispatchedQuantizationMatchesReferenceBytes) {
  for (size_t cols : {1u, 7u, 32u, 96u, 257u, 1024u}) {
    const size_t rows = 3, stride = cols + 1;
    std::vector<float> x = RandomFloats(rows * stride, static_cast<uint32_t>(cols), 5.0f);
    for (size_t c = 0; c < cols; ++c) x[stride + c] = 0.0f;  // an all-zero row
    std::vector<int8_t> q(rows * cols), want(rows * cols);
    std::vector<float> s(rows), want_s(rows);
    kernels::QuantizeRowsDynamic(x.data(), rows, cols, stride, q.data(), s.data());
    kernels::QuantizeRowsReference(x.data(), rows, cols, stride, want.data(), want_s.data());
    EXPECT_EQ(q, want) << cols << " columns, kernel " << kernels::Int8GemmKernelName();
    EXPECT_EQ(s, want_s) << cols << " columns";
  }
}

TEST(Int8Gemm, ClampsAndHandlesAllZeroRows) {
  const size_t k = 64, out = 8;
  std::vector<int8_t> w(out * k, 3), xq(2 * k);
  std::vector<float> w_scale(out, 0.5f), bias(out, -1.0f), x(2 * k, 0.0f), x_scale(2);
  for (size_t i = 0; i < k; ++i) x[k + i] = 1.0f;
  kernels::QuantizeRowsDynamic(x.data(), 2, k, k, xq.data(), x_scale.data());
  EXPECT_EQ(x_scale[0], 0.0f);
  kernels::Int8GemmArgs a{xq.data(), x_scale.data(), 2, k, w.data(), w_scale.data(), bias.data(),
                          nullptr, out, 0.0f, 50.0f};
  std::vector<float> y(2 * out);
  a.y = y.data();
  kernels::Int8Gemm(a, 0, out);
  for (size_t o = 0; o < out; ++o) {
    EXPECT_EQ(y[o], 0.0f);        // zero row: bias -1, clamped at 0
    EXPECT_EQ(y[out + o], 50.0f);  // 64 * 3 * 0.5 * (1/127 * 127) - 1 = 95, clamped at 50
  }
}

struct FormatCase {
  WeightFormat format;
  int threads;
  // max |logit - fp32 logit| over all positions; measured on this model (largest |logit|
  // 13.5): fp16 0.0056, int8 0.23.
  float logit_tolerance;
};

class FormatAgreementTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(FormatAgreementTest, LogitsAndGreedyIdsAgreeWithFp32) {
  const FormatCase c = GetParam();
  const testing::ModelOptions o = testing::PrunedModelOptions();
  auto ref = testing::BuildModel(o, WeightFormat::kF32);
  auto narrow = testing::BuildModel(o, c.format);
  ASSERT_TRUE(ref->model && narrow->model);
  EXPECT_LT(narrow->model->info().file_bytes, ref->model->info().file_bytes + (c.format == WeightFormat::kF32 ? 1 : 0));
  TranslatorLimits limits;
  limits.max_batch = 3;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 12;
  limits.num_threads = c.threads;
  // The storage format's contract (F32 arithmetic); fp16 arithmetic: fp16_compute_test.cc.
  limits.fp16_compute = Fp16Compute::kOff;
  auto tr_ref = Translator::Create(ref->model, limits);
  auto tr = Translator::Create(narrow->model, limits);
  ASSERT_TRUE(tr_ref.ok() && tr.ok()) << tr.status().ToString();

  const std::vector<int32_t> src = testing::RandomSource(o, 9, 3);
  const std::vector<int32_t> tgt = testing::RandomSource(o, 6, 4);
  const size_t n = (tgt.size() + 1) * o.vocab;
  std::vector<float> want(n), got(n);
  ASSERT_TRUE((*tr_ref)->ForcedLogits({src.data(), src.size()}, {tgt.data(), tgt.size()}, want.data()).ok());
  ASSERT_TRUE((*tr)->ForcedLogits({src.data(), src.size()}, {tgt.data(), tgt.size()}, got.data()).ok());
  float worst = 0, spread = 0;
  for (size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::fabs(got[i] - want[i]));
    spread = std::max(spread, std::fabs(want[i]));
  }
  EXPECT_LE(worst, c.logit_tolerance) << "largest |logit| " << spread;
  if (c.format == WeightFormat::kF32) {
    EXPECT_EQ(worst, 0.0f);
  }

  // Greedy over three sentences: the same ids, or (int8) a first difference only where the
  // fp32 model's top two logits are closer than the tolerance.
  std::vector<std::vector<int32_t>> sources;
  std::vector<TokenSpan> spans;
  for (uint32_t s = 0; s < 3; ++s) sources.push_back(testing::RandomSource(o, 5 + 3 * s, 10 + s));
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  SearchOptions greedy;
  ASSERT_TRUE((*tr_ref)->TranslateIds(spans.data(), spans.size(), greedy).ok());
  ASSERT_TRUE((*tr)->TranslateIds(spans.data(), spans.size(), greedy).ok());
  size_t same = 0;
  for (size_t s = 0; s < 3; ++s) {
    const HypothesisView a = (*tr_ref)->hypothesis(s, 0), b = (*tr)->hypothesis(s, 0);
    same += std::vector<int32_t>(a.ids, a.ids + a.size) == std::vector<int32_t>(b.ids, b.ids + b.size);
  }
  if (c.format != WeightFormat::kI8) {
    EXPECT_EQ(same, 3u);
  } else {
    EXPECT_GE(same, 2u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, FormatAgreementTest,
    ::testing::Values(FormatCase{WeightFormat::kF32, 1, 0.0f},
                      FormatCase{WeightFormat::kF16, 1, 0.02f},
                      FormatCase{WeightFormat::kF16, 2, 0.02f},
                      FormatCase{WeightFormat::kI8, 1, 0.4f},
                      FormatCase{WeightFormat::kI8, 2, 0.4f}),
    [](const ::testing::TestParamInfo<FormatCase>& param_info) {
      return std::string(WeightFormatName(param_info.param.format)) + "_threads" +
             std::to_string(param_info.param.threads);
    });

// An int8 translation has the same bits on 1, 2 and 3 threads: the pool splits the products by
// output channel and attention by head, and every channel and head is computed the same way
// whatever the split, on whatever int8 kernel family this CPU runs. The model is large enough
// that lm_head (4 rows x 128 x 4096) and the encoder's attention (40 tokens) go to the pool.
TEST(Int8Threads, TranslationsAreBitIdenticalOnAnyThreadCount) {
  testing::ModelOptions o;
  o.d_model = 128;
  o.heads = 4;
  o.encoder_ffn = 256;
  o.decoder_ffn = 256;
  o.vocab = 4096;
  o.pad = o.start = 4095;
  o.max_positions = 64;
  o.weights = WeightFormat::kI8;
  auto m = testing::BuildModel(o);
  ASSERT_TRUE(m->model);
  std::vector<std::vector<int32_t>> sources;
  std::vector<TokenSpan> spans;
  for (uint32_t s = 0; s < 3; ++s) sources.push_back(testing::RandomSource(o, 40 - 7 * s, 50 + s));
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  const std::vector<int32_t> target = testing::RandomSource(o, 8, 60);
  SearchOptions beam;
  beam.beam_size = 4;
  beam.num_hypotheses = 4;
  beam.max_length = 10;
  std::vector<float> want, got;
  std::vector<std::vector<int32_t>> want_ids;
  std::vector<float> want_scores;
  for (int threads : {1, 2, 3}) {
    TranslatorLimits limits;
    limits.max_batch = 3;
    limits.max_beam = 4;
    limits.max_source_tokens = 48;
    limits.max_target_tokens = 16;
    limits.num_threads = threads;
    auto tr = Translator::Create(m->model, limits);
    ASSERT_TRUE(tr.ok()) << tr.status().ToString();
    std::vector<float>& logits = threads == 1 ? want : got;
    logits.assign((target.size() + 1) * o.vocab, 0.0f);
    ASSERT_TRUE((*tr)->ForcedLogits(spans[0], {target.data(), target.size()}, logits.data()).ok());
    if (threads > 1) {
      ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
          << threads << " threads: forced logits differ";
    }
    ASSERT_TRUE((*tr)->TranslateIds(spans.data(), spans.size(), beam).ok());
    size_t i = 0;
    for (size_t s = 0; s < spans.size(); ++s) {
      for (size_t k = 0; k < (*tr)->num_hypotheses(s); ++k, ++i) {
        const HypothesisView h = (*tr)->hypothesis(s, k);
        const std::vector<int32_t> ids(h.ids, h.ids + h.size);
        if (threads == 1) {
          want_ids.push_back(ids);
          want_scores.push_back(h.score);
          continue;
        }
        ASSERT_LT(i, want_ids.size());
        EXPECT_EQ(ids, want_ids[i]) << threads << " threads, sentence " << s << " hypothesis " << k;
        EXPECT_EQ(std::memcmp(&h.score, &want_scores[i], sizeof(float)), 0)
            << threads << " threads, sentence " << s << " hypothesis " << k;
      }
    }
    EXPECT_EQ(i, want_ids.size());
  }
}

TEST(FormatLoading, RejectsNarrowBiasesAndReportsTheTensor) {
  ModelSpec spec = testing::MakeSpec(testing::PrunedModelOptions());
  for (TensorSpec& t : spec.tensors) {
    if (t.name == "model.encoder.layers.0.fc1.bias") t.dtype = DType::kF16;
  }
  testing::AlignedBytes image(testing::Serialize(spec));
  auto loaded = Model::LoadFromMemory(image.data(), image.size());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), ErrorCode::kInvalidModel);
  EXPECT_NE(loaded.status().message().find("model.encoder.layers.0.fc1.bias: dtype F16 is not allowed here"),
            std::string::npos)
      << loaded.status().message();
}

TEST(FormatLoading, Int8ModelArenaHoldsTheQuantizedRows) {
  const testing::ModelOptions o = testing::PrunedModelOptions();
  auto f32 = testing::BuildModel(o, WeightFormat::kF32);
  auto i8 = testing::BuildModel(o, WeightFormat::kI8);
  TranslatorLimits limits;
  limits.max_batch = 2;
  limits.max_source_tokens = 8;
  limits.max_target_tokens = 8;
  auto a = Translator::Create(f32->model, limits);
  auto b = Translator::Create(i8->model, limits);
  ASSERT_TRUE(a.ok() && b.ok());
  // [max(N = 16, R = 8), widest input 128] int8 + 16 float scales, each 64-byte aligned.
  EXPECT_EQ((*b)->arena_bytes() - (*a)->arena_bytes(), 16u * 128u + 64u);
}

}  // namespace
}  // namespace headwise
