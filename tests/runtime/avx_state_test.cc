// The AVX kernels hand the CPU back with the upper halves of the vector registers clean
// (vzeroupper): dirty upper state makes every later SSE instruction slow (glibc's exp ran 15x
// slower after a translation step, sampling 6x greedy). XGETBV with ECX = 1 reports which state
// components are in use; bit 2 (the upper 128 bits of YMM) must be clear after each public
// kernel entry and after whole translations. x86 with XGETBV-1 only (skipped elsewhere).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/softmax.h"
#include "tests/runtime/test_model.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HEADWISE_TEST_X86 1
#endif

namespace headwise {
namespace {

#ifdef HEADWISE_TEST_X86
// CPUID.(EAX=0DH, ECX=1):EAX bit 2: XGETBV with ECX = 1 (XINUSE) is available.
bool HasXinuse() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 0xD) return false;
  __cpuid_count(0xD, 1, a, b, c, d);
  return (a & 4u) != 0;
}

// Whether the upper halves of the YMM registers are in use, read with no vector instruction of
// our own in between.
__attribute__((noinline)) bool UpperYmmInUse() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return (lo & 4u) != 0;
}
#endif

TEST(AvxState, KernelsAndTranslationsLeaveTheUpperHalvesClean) {
#ifndef HEADWISE_TEST_X86
  GTEST_SKIP() << "not x86";
#else
  if (!HasXinuse()) GTEST_SKIP() << "no XGETBV with ECX = 1 on this CPU";
  std::mt19937 rng(1);
  std::normal_distribution<float> value(0.0f, 3.0f);
  for (size_t n : {size_t{7}, size_t{64}, size_t{8000}}) {
    std::vector<float> x(n);
    for (float& v : x) v = value(rng);
    const kernels::LogSoftmaxNorm norm = kernels::LogSoftmaxNormalizer(x.data(), n);
    EXPECT_FALSE(UpperYmmInUse()) << "after LogSoftmaxNormalizer of " << n;
    EXPECT_TRUE(std::isfinite(norm.log_sum));
    kernels::SoftmaxInPlace(x.data(), n);
    EXPECT_FALSE(UpperYmmInUse()) << "after SoftmaxInPlace of " << n;
    kernels::ExpInPlace(x.data(), n);
    EXPECT_FALSE(UpperYmmInUse()) << "after ExpInPlace of " << n;
    EXPECT_LT(kernels::FirstIndexOf(x.data(), n, x[n / 2]), n);
    EXPECT_FALSE(UpperYmmInUse()) << "after FirstIndexOf of " << n;
  }
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8}) {
    auto tm = testing::BuildModel(testing::PrunedModelOptions(), f);
    ASSERT_NE(tm->model, nullptr);
    TranslatorLimits limits;
    limits.max_batch = 2;
    limits.max_source_tokens = 16;
    limits.max_target_tokens = 8;
    limits.max_beam = 2;
    auto t = Translator::Create(tm->model, limits);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    const std::vector<int32_t> src = testing::RandomSource(testing::PrunedModelOptions(), 5, 3);
    const TokenSpan spans[] = {{src.data(), src.size()}, {src.data(), src.size()}};
    for (int beam : {1, 2}) {
      SearchOptions so;
      so.beam_size = beam;
      ASSERT_TRUE((*t)->TranslateIds(spans, 2, so).ok());
      EXPECT_FALSE(UpperYmmInUse()) << WeightFormatName(f) << ", beam " << beam << ": "
                                    << (*t)->kernel_paths();
    }
  }
#endif
}

}  // namespace
}  // namespace headwise
