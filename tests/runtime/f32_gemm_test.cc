// The in-place fp32 kernel (kernels/f32_gemm.h) against plain loops: for F32 and F16 weights,
// any number of rows (every row tail of the 4-row tiles, strided rows) and any split of the
// output channels, the dispatched kernel must give the reference loop's exact floats (same
// summation order), a row's result must not depend on the other rows of the call, F16 weights
// must give what their F32 widening gives, and the result must be close to the product in
// double precision. Every family this CPU runs (AVX-512, AVX2) must give the reference's exact
// floats too, for 1-40 rows (every tail of the 12-row and 4-row tiles and of the pairs), inputs
// in one and several 512-wide segments with an 8-float tail, and channel counts that leave
// tails of the 4- and 8-channel tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/half.h"
#include "kernels/f32_gemm.h"
#include "kernels/f32_gemm_kernel.h"
#include "tests/support/random_data.h"

namespace headwise {
namespace {

using testing::RandomFloats;

struct GemmCase {
  size_t rows, k, n;
};

// Inputs of one case, rows `stride` floats apart (k + 3: not a multiple of 8), outputs n + 5
// floats apart, both with guard values between rows.
struct Problem {
  GemmCase c;
  size_t x_stride, y_stride;
  std::vector<float> x, w, bias;
  std::vector<uint16_t> w16;
  std::vector<float> w16_widened;

  explicit Problem(const GemmCase& g, uint32_t seed)
      : c(g), x_stride(g.k + 3), y_stride(g.n + 5) {
    x = RandomFloats(c.rows * x_stride, seed, 2.0f);
    w = RandomFloats(c.n * c.k, seed + 1, 0.3f);
    bias = RandomFloats(c.n, seed + 2, 0.5f);
    w16.resize(w.size());
    w16_widened.resize(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      w16[i] = FloatToF16(w[i]);
      w16_widened[i] = F16ToFloat(w16[i]);
    }
  }

  kernels::F32GemmArgs Args(bool f16, float* y) const {
    kernels::F32GemmArgs a;
    a.x = x.data();
    a.x_stride = x_stride;
    a.rows = c.rows;
    a.k = c.k;
    a.w = f16 ? static_cast<const void*>(w16.data()) : w.data();
    a.f16 = f16;
    a.bias = bias.data();
    a.y = y;
    a.y_stride = y_stride;
    a.out_min = -std::numeric_limits<float>::infinity();
    a.out_max = std::numeric_limits<float>::infinity();
    return a;
  }
  std::vector<float> Output() const { return std::vector<float>(c.rows * y_stride, -7.0f); }
};

class F32GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(F32GemmTest, DispatchedKernelMatchesReferenceAndDoubleProduct) {
  const Problem p(GetParam(), 1);
  const GemmCase& c = p.c;
  for (bool f16 : {false, true}) {
    SCOPED_TRACE(f16 ? "F16 weights" : "F32 weights");
    std::vector<float> got = p.Output(), split = p.Output(), want = p.Output();
    kernels::F32Gemm(p.Args(f16, got.data()), 0, c.n);
    // Three ranges, as threads would split it (the splits need not be multiples of anything).
    const kernels::F32GemmArgs s = p.Args(f16, split.data());
    kernels::F32Gemm(s, 0, c.n / 3);
    kernels::F32Gemm(s, c.n / 3, c.n / 2);
    kernels::F32Gemm(s, c.n / 2, c.n);
    kernels::F32GemmReference(p.Args(f16, want.data()), 0, c.n);
    ASSERT_EQ(got, want) << "fast kernel: " << kernels::HaveFastF32Gemm();  // guards included
    ASSERT_EQ(split, want);
    const std::vector<float>& wf = f16 ? p.w16_widened : p.w;
    for (size_t r = 0; r < c.rows; ++r) {
      const float* x = p.x.data() + r * p.x_stride;
      for (size_t o = 0; o < c.n; ++o) {
        double exact = p.bias[o], magnitude = std::fabs(p.bias[o]);
        for (size_t i = 0; i < c.k; ++i) {
          exact += static_cast<double>(x[i]) * wf[o * c.k + i];
          magnitude += std::fabs(static_cast<double>(x[i]) * wf[o * c.k + i]);
        }
        // float rounding of at most k + 4 additions, each within 2^-24 of the partial sum.
        const double bound = magnitude * static_cast<double>(c.k + 4) * 6e-8 + 1e-7;
        ASSERT_NEAR(got[r * p.y_stride + o], exact, bound) << "row " << r << " out " << o;
      }
    }
  }
}

TEST_P(F32GemmTest, F16WeightsGiveTheirF32Widening) {
  Problem p(GetParam(), 4);
  std::vector<float> from16 = p.Output(), from32 = p.Output();
  kernels::F32Gemm(p.Args(true, from16.data()), 0, p.c.n);
  p.w = p.w16_widened;
  kernels::F32Gemm(p.Args(false, from32.data()), 0, p.c.n);
  EXPECT_EQ(from16, from32);
}

TEST_P(F32GemmTest, EachRowAsAloneAndClamped) {
  const Problem p(GetParam(), 7);
  const GemmCase& c = p.c;
  for (bool f16 : {false, true}) {
    SCOPED_TRACE(f16 ? "F16 weights" : "F32 weights");
    std::vector<float> all = p.Output();
    kernels::F32Gemm(p.Args(f16, all.data()), 0, c.n);
    for (size_t r = 0; r < c.rows; ++r) {
      std::vector<float> one(c.n);
      kernels::F32GemmArgs a = p.Args(f16, one.data());
      a.x += r * p.x_stride;
      a.rows = 1;
      kernels::F32Gemm(a, 0, c.n);
      ASSERT_TRUE(std::equal(one.begin(), one.end(), all.begin() + r * p.y_stride)) << "row " << r;
      a.out_min = 0.0f;
      a.out_max = 0.25f;
      kernels::F32Gemm(a, 0, c.n);
      for (size_t o = 0; o < c.n; ++o) {
        ASSERT_EQ(one[o], std::min(0.25f, std::max(0.0f, all[r * p.y_stride + o]))) << "out " << o;
      }
    }
  }
}

// Rows 1-9 cover every tail of the 4-row tiles; n covers channel tails of 3, 4 and 8 and
// blocks (F32GemmBlockChannels is 96 channels at k 512); k covers the 64-byte steps, the
// 8-float chunks and the scalar tail.
INSTANTIATE_TEST_SUITE_P(Shapes, F32GemmTest,
                         ::testing::Values(GemmCase{1, 256, 768}, GemmCase{2, 512, 200},
                                           GemmCase{3, 96, 13}, GemmCase{4, 33, 17},
                                           GemmCase{5, 512, 101}, GemmCase{6, 7, 5},
                                           GemmCase{7, 1024, 50}, GemmCase{9, 40, 26},
                                           GemmCase{20, 64, 300}, GemmCase{1, 8, 8},
                                           GemmCase{2, 1, 3}));

// Every family compiled in and available here, the portable loop included.
std::vector<kernels::F32GemmKernel> AvailableFamilies() {
  size_t count = 0;
  const kernels::F32GemmKernel* all = kernels::F32GemmKernels(&count);
  std::vector<kernels::F32GemmKernel> out;
  for (size_t i = 0; i < count; ++i) {
    if (all[i].available()) out.push_back(all[i]);
  }
  return out;
}

TEST(F32GemmFamilies, TheDispatchedFamilyIsTheFirstAvailable) {
  const std::vector<kernels::F32GemmKernel> families = AvailableFamilies();
  ASSERT_FALSE(families.empty());
  EXPECT_STREQ(families.back().name, "portable");
  if (std::getenv("HEADWISE_F32_GEMM_KERNEL") == nullptr) {
    EXPECT_EQ(std::string("f32-gemm-") + families.front().name, kernels::F32GemmKernelName());
  }
  EXPECT_EQ(kernels::HaveFastF32Gemm(), families.size() > 1);
  std::printf("f32 gemm families here:");
  for (const auto& f : families) std::printf(" %s", f.name);
  std::printf("\n");
}

// k: one segment with no tail, one with a tail, two segments (the second short) with a tail,
// three segments; n: tails of 4 and 8 channels, less than one tile.
TEST(F32GemmFamilies, EveryFamilyGivesTheReferenceFloatsForOneToFortyRows) {
  const GemmCase shapes[] = {{40, 64, 29}, {40, 37, 13}, {40, 1030, 21}, {40, 1536, 10},
                             {40, 8, 3}};
  for (const kernels::F32GemmKernel& family : AvailableFamilies()) {
    SCOPED_TRACE(family.name);
    for (const GemmCase& shape : shapes) {
      const Problem p(shape, 11);
      for (bool f16 : {false, true}) {
        for (size_t rows = 1; rows <= shape.rows; ++rows) {
          SCOPED_TRACE(::testing::Message() << (f16 ? "F16" : "F32") << " rows " << rows << " k "
                                            << shape.k << " n " << shape.n);
          std::vector<float> got = p.Output(), want = p.Output();
          kernels::F32GemmArgs g = p.Args(f16, got.data()), w = p.Args(f16, want.data());
          g.rows = w.rows = rows;
          // Two ranges, the cut not a multiple of any tile.
          family.gemm(g, 0, shape.n / 2 + 1);
          family.gemm(g, shape.n / 2 + 1, shape.n);
          kernels::F32GemmReference(w, 0, shape.n);
          ASSERT_EQ(got, want);  // guards between rows included
        }
      }
    }
  }
}

TEST(F32GemmFamilies, EveryFamilyClampsAsTheReference) {
  const Problem p(GemmCase{13, 512, 24}, 12);
  for (const kernels::F32GemmKernel& family : AvailableFamilies()) {
    SCOPED_TRACE(family.name);
    for (bool f16 : {false, true}) {
      std::vector<float> got = p.Output(), want = p.Output();
      kernels::F32GemmArgs g = p.Args(f16, got.data()), w = p.Args(f16, want.data());
      g.out_min = w.out_min = -0.5f;
      g.out_max = w.out_max = 0.75f;
      family.gemm(g, 0, p.c.n);
      kernels::F32GemmReference(w, 0, p.c.n);
      ASSERT_EQ(got, want);
    }
  }
}

}  // namespace
}  // namespace headwise
