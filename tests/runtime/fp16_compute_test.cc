// The fp16 arithmetic path (TranslatorLimits::fp16_compute, fc/fc_f16.cc): detection, one
// FullyConnected in f16 against a double-precision reference, and whole Translators of an fp16
// model with the path on against the F32 fallback (teacher-forced logits, greedy ids).
//
// Where the CPU has no fp16 arithmetic (x86, armhf, aarch64 before ARMv8.2) the f16 cases
// check the fallback instead. HEADWISE_EXPECT_FP16=1|0 (set by the qemu CPU-model tests,
// tests/platforms/CMakeLists.txt) makes the expectation explicit: with 1 the f16 path must be
// taken, with 0 the fallback; unset, either is accepted and the test checks what it got.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/half.h"
#include "fc/fully_connected.h"
#include "kernels/f32_gemm.h"
#include "translator_impl.h"
#include "xnn_backend.h"
#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

// -1: unset, else 0 or 1.
int ExpectedFp16() {
  const char* e = std::getenv("HEADWISE_EXPECT_FP16");
  if (e == nullptr || *e == '\0') return -1;
  return std::string(e) == "1" ? 1 : 0;
}

bool Fp16Here() {
  EXPECT_TRUE(InitXnnpack().ok());
  return DetectFp16Arithmetic().available;
}

TEST(Fp16Detection, AgreesWithTheExpectedCpu) {
  const bool here = Fp16Here();
  std::printf("fp16 arithmetic: %s (%s)\n", here ? "yes" : "no", DetectFp16Arithmetic().reason.c_str());
  const int want = ExpectedFp16();
  if (want >= 0) {
    EXPECT_EQ(here, want == 1) << DetectFp16Arithmetic().reason;
  }
#if !defined(__aarch64__)
  EXPECT_FALSE(here) << "fp16 arithmetic is only used on aarch64";
#endif
}

// One operator: y = clamp(x W^T + b) with F16 W. The reference is double precision over the
// F16 weights widened exactly and the F32 inputs, so it measures only the f16 arithmetic:
// inputs and bias rounded to 11 bits, products summed in fp16 by XNNPACK's kernels (one
// rounding per multiply-add), the output rounded once more. The bound per output is
//   |y - ref| <= 2^-11 * (|ref| + (4 + sqrt(in)) * sum_i |x_i w_i|)
// (a rounding of each partial sum, growing like a random walk over the inner dimension);
// measured worst ratios to it (printed) 0.07 .. 0.19 under qemu -cpu cortex-a76.
struct FcCase {
  size_t rows, in, parts, out_per_part;
  bool relu;
  size_t in_pad, out_pad;  // extra floats per row of x and y (strides)
};

class Fp16FullyConnectedTest : public ::testing::TestWithParam<FcCase> {};

TEST_P(Fp16FullyConnectedTest, MatchesDoubleReferenceWithinFp16Bound) {
  const FcCase c = GetParam();
  const bool f16 = Fp16Here();
  const size_t out = c.parts * c.out_per_part;
  const size_t xs = c.in + c.in_pad, ys = out + c.out_pad;
  std::mt19937 rng(7 + static_cast<uint32_t>(c.in));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(c.rows * xs);
  for (float& v : x) v = 2.0f * u(rng);
  std::vector<std::vector<uint16_t>> w(c.parts, std::vector<uint16_t>(c.out_per_part * c.in));
  std::vector<std::vector<float>> b(c.parts, std::vector<float>(c.out_per_part));
  std::vector<FcPart> parts(c.parts);
  for (size_t p = 0; p < c.parts; ++p) {
    for (uint16_t& v : w[p]) v = FloatToF16(0.2f * u(rng));
    for (float& v : b[p]) v = 0.5f * u(rng);
    parts[p].weight = {w[p].data(), DType::kF16, static_cast<uint32_t>(c.out_per_part),
                       static_cast<uint32_t>(c.in), nullptr};
    parts[p].bias = {b[p].data(), DType::kF32, 1, static_cast<uint32_t>(c.out_per_part), nullptr};
  }
  std::vector<uint16_t> s_in(c.rows * c.in), s_out(c.rows * out);
  F16Scratch scratch{s_in.data(), s_out.data(), s_in.size(), s_out.size()};
  FcParams params;
  params.input_stride = xs;
  params.output_stride = ys;
  if (c.relu) params.output_min = 0.0f;
  params.f16_scratch = f16 ? &scratch : nullptr;
  auto fc = FullyConnected::Create(parts.data(), parts.size(), params, "test fc");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  // The F32 fallback reads the F16 weights in place where kernels/f32_gemm.h has a kernel.
  const std::string fallback = kernels::HaveFastF32Gemm()
                                   ? std::string("fp32: ") + kernels::F32GemmKernelName()
                                   : std::string("fp32: xnnpack");
  EXPECT_EQ(fc->KernelName(c.rows), f16 ? std::string("fp16: xnnpack") : fallback);
  std::vector<float> y(c.rows * ys, -7.0f);
  ASSERT_TRUE(fc->Run(c.rows, x.data(), y.data(), nullptr).ok());

  double worst_ratio = 0.0;
  for (size_t r = 0; r < c.rows; ++r) {
    for (size_t p = 0; p < c.parts; ++p) {
      for (size_t o = 0; o < c.out_per_part; ++o) {
        double ref = b[p][o], mag = 0.0;
        for (size_t i = 0; i < c.in; ++i) {
          const double t = double(x[r * xs + i]) * F16ToFloat(w[p][o * c.in + i]);
          ref += t;
          mag += std::fabs(t);
        }
        if (c.relu) ref = std::max(ref, 0.0);
        // The F32 fallback is held to the same bound (it is far inside it).
        const double bound = std::ldexp(std::fabs(ref) + (4.0 + std::sqrt(double(c.in))) * mag, -11);
        const double got = y[r * ys + p * c.out_per_part + o];
        ASSERT_LE(std::fabs(got - ref), bound) << "row " << r << " output " << p * c.out_per_part + o;
        worst_ratio = std::max(worst_ratio, std::fabs(got - ref) / bound);
      }
    }
    for (size_t o = out; o < ys; ++o) ASSERT_EQ(y[r * ys + o], -7.0f) << "wrote past the row";
  }
  std::printf("%s: worst |error| / bound = %.3f\n", f16 ? "f16" : "f32 fallback", worst_ratio);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp16FullyConnectedTest,
    ::testing::Values(FcCase{1, 64, 1, 96, false, 0, 0},     // one decoder row
                      FcCase{7, 256, 1, 1024, true, 0, 0},   // fc1 of a small Marian, relu
                      FcCase{5, 1024, 1, 256, false, 3, 5},  // fc2, strided rows
                      FcCase{9, 64, 3, 32, false, 0, 0}),    // fused q | k | v
    [](const ::testing::TestParamInfo<FcCase>& i) {
      return "rows" + std::to_string(i.param.rows) + "_in" + std::to_string(i.param.in) + "_out" +
             std::to_string(i.param.parts * i.param.out_per_part) + (i.param.relu ? "_relu" : "");
    });

TranslatorLimits Limits(Fp16Compute mode, int threads = 1) {
  TranslatorLimits l;
  l.max_batch = 3;
  l.max_source_tokens = 16;
  l.max_target_tokens = 12;
  l.num_threads = threads;
  l.fp16_compute = mode;
  return l;
}

TEST(Fp16ComputeOption, PrecisionFollowsTheModeTheModelAndTheCpu) {
  const bool f16 = Fp16Here();
  const testing::ModelOptions o = testing::PrunedModelOptions();
  auto m16 = testing::BuildModel(o, WeightFormat::kF16);
  auto m32 = testing::BuildModel(o, WeightFormat::kF32);
  auto m8 = testing::BuildModel(o, WeightFormat::kI8);
  ASSERT_TRUE(m16->model && m32->model && m8->model);

  auto off = Translator::Create(m16->model, Limits(Fp16Compute::kOff));
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ((*off)->matmul_precision(), MatmulPrecision::kF32);
  EXPECT_NE((*off)->precision_note().find("fp16_compute is off"), std::string::npos);

  auto autom = Translator::Create(m16->model, Limits(Fp16Compute::kAuto));
  ASSERT_TRUE(autom.ok()) << autom.status().ToString();
  EXPECT_EQ((*autom)->matmul_precision(), f16 ? MatmulPrecision::kF16 : MatmulPrecision::kF32)
      << (*autom)->precision_note();
  std::printf("auto on an fp16 model: %s\n", (*autom)->precision_note().c_str());
  // The f16 path adds its activation copies to the arena.
  if (f16) {
    EXPECT_GT((*autom)->arena_bytes(), (*off)->arena_bytes());
  }

  auto req = Translator::Create(m16->model, Limits(Fp16Compute::kRequire));
  if (f16) {
    ASSERT_TRUE(req.ok()) << req.status().ToString();
    EXPECT_EQ((*req)->matmul_precision(), MatmulPrecision::kF16);
  } else {
    ASSERT_FALSE(req.ok());
    EXPECT_EQ(req.status().code(), ErrorCode::kBackend);
    EXPECT_NE(req.status().message().find("kRequire: no fp16 arithmetic here"), std::string::npos)
        << req.status().message();
  }

  // Models without F16 matrices: auto is their own precision, require is the caller's error.
  auto a32 = Translator::Create(m32->model, Limits(Fp16Compute::kAuto));
  ASSERT_TRUE(a32.ok());
  EXPECT_EQ((*a32)->matmul_precision(), MatmulPrecision::kF32);
  auto a8 = Translator::Create(m8->model, Limits(Fp16Compute::kAuto));
  ASSERT_TRUE(a8.ok());
  EXPECT_EQ((*a8)->matmul_precision(), MatmulPrecision::kInt8);
  auto r32 = Translator::Create(m32->model, Limits(Fp16Compute::kRequire));
  ASSERT_FALSE(r32.ok());
  EXPECT_EQ(r32.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r32.status().message().find("no F16 weight matrices"), std::string::npos);

  auto bad = Translator::Create(m16->model, Limits(static_cast<Fp16Compute>(7)));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("found 7"), std::string::npos);
  EXPECT_STREQ(MatmulPrecisionName(MatmulPrecision::kF16), "f16");
}

// The whole model, fp16 path (where available) against the F32 fallback of the same fp16
// file: teacher-forced logits within kLogitTolerance of the fallback's and the same greedy
// ids. Measured under qemu -cpu cortex-a76: 0.036 (largest |logit| of this model 13.5; the
// F16 storage format alone, against the F32 model: 0.0056).
constexpr float kLogitTolerance = 0.08f;

class Fp16ComputeModelTest : public ::testing::TestWithParam<int> {};

TEST_P(Fp16ComputeModelTest, LogitsAndGreedyIdsAgreeWithTheF32Fallback) {
  const int threads = GetParam();
  const bool f16 = Fp16Here();
  const int want = ExpectedFp16();
  if (want >= 0) {
    ASSERT_EQ(f16, want == 1) << DetectFp16Arithmetic().reason;
  }
  const testing::ModelOptions o = testing::PrunedModelOptions();
  auto m16 = testing::BuildModel(o, WeightFormat::kF16);
  ASSERT_TRUE(m16->model);
  auto ref = Translator::Create(m16->model, Limits(Fp16Compute::kOff, threads));
  auto tr = Translator::Create(m16->model, Limits(Fp16Compute::kAuto, threads));
  ASSERT_TRUE(ref.ok() && tr.ok()) << tr.status().ToString();
  ASSERT_EQ((*tr)->matmul_precision(), f16 ? MatmulPrecision::kF16 : MatmulPrecision::kF32);

  const std::vector<int32_t> src = testing::RandomSource(o, 9, 3);
  const std::vector<int32_t> tgt = testing::RandomSource(o, 6, 4);
  const size_t n = (tgt.size() + 1) * o.vocab;
  std::vector<float> want_logits(n), got(n);
  ASSERT_TRUE((*ref)->ForcedLogits({src.data(), src.size()}, {tgt.data(), tgt.size()}, want_logits.data()).ok());
  ASSERT_TRUE((*tr)->ForcedLogits({src.data(), src.size()}, {tgt.data(), tgt.size()}, got.data()).ok());
  float worst = 0, spread = 0;
  for (size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::isnan(got[i]) ? INFINITY : std::fabs(got[i] - want_logits[i]));
    spread = std::max(spread, std::fabs(want_logits[i]));
  }
  std::printf("%s, %d thread(s): largest logit difference to the F32 fallback %.5f (largest |logit| %.2f)\n",
              f16 ? "f16" : "f32", threads, worst, spread);
  EXPECT_LE(worst, kLogitTolerance);
  if (!f16) {
    EXPECT_EQ(worst, 0.0f) << "the fallback is the F32 path itself";
  }

  std::vector<std::vector<int32_t>> sources;
  std::vector<TokenSpan> spans;
  for (uint32_t s = 0; s < 3; ++s) sources.push_back(testing::RandomSource(o, 5 + 3 * s, 10 + s));
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  for (int beam : {1, 3}) {
    SearchOptions search;
    search.beam_size = beam;
    ASSERT_TRUE((*ref)->TranslateIds(spans.data(), spans.size(), search).ok());
    ASSERT_TRUE((*tr)->TranslateIds(spans.data(), spans.size(), search).ok());
    for (size_t s = 0; s < spans.size(); ++s) {
      const HypothesisView a = (*ref)->hypothesis(s, 0), b = (*tr)->hypothesis(s, 0);
      EXPECT_EQ(std::vector<int32_t>(a.ids, a.ids + a.size), std::vector<int32_t>(b.ids, b.ids + b.size))
          << "beam " << beam << " sentence " << s;
      EXPECT_NEAR(a.score, b.score, 0.02f) << "beam " << beam << " sentence " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, Fp16ComputeModelTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return "threads" + std::to_string(i.param);
                         });

}  // namespace
}  // namespace headwise
