// The single-row fp32 kernel (kernels/f32_gemv.h) against plain loops: the dispatched kernel
// must give the reference loop's exact floats (same summation order) for any split of the
// output channels, and both must be close to the product in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/f32_gemm.h"
#include "kernels/f32_gemv.h"
#include "tests/support/random_data.h"

namespace headwise {
namespace {

using testing::RandomFloats;

struct GemvCase {
  size_t k, n;
};

class F32GemvTest : public ::testing::TestWithParam<GemvCase> {};

TEST_P(F32GemvTest, DispatchedKernelMatchesReferenceAndDoubleProduct) {
  const GemvCase c = GetParam();
  const std::vector<float> x = RandomFloats(c.k, 1, 2.0f);
  const std::vector<float> w = RandomFloats(c.n * c.k, 2, 0.3f);
  const std::vector<float> bias = RandomFloats(c.n, 3, 0.5f);
  kernels::F32GemvArgs a;
  a.x = x.data();
  a.k = c.k;
  a.w = w.data();
  a.bias = bias.data();
  a.out_min = -std::numeric_limits<float>::infinity();
  a.out_max = std::numeric_limits<float>::infinity();
  std::vector<float> got(c.n + 1, -7.0f), split(c.n + 1, -7.0f), want(c.n + 1, -7.0f);
  a.y = got.data();
  kernels::F32Gemv(a, 0, c.n);
  // Three ranges, as threads would split it (the splits need not be multiples of 8).
  a.y = split.data();
  kernels::F32Gemv(a, 0, c.n / 3);
  kernels::F32Gemv(a, c.n / 3, c.n / 2);
  kernels::F32Gemv(a, c.n / 2, c.n);
  a.y = want.data();
  kernels::F32GemvReference(a, 0, c.n);
  ASSERT_EQ(got, want) << "fast kernel: " << kernels::HaveFastF32Gemv();
  ASSERT_EQ(split, want);
  EXPECT_EQ(got[c.n], -7.0f) << "wrote past the output";
  for (size_t o = 0; o < c.n; ++o) {
    double exact = bias[o], magnitude = std::fabs(bias[o]);
    for (size_t i = 0; i < c.k; ++i) {
      exact += static_cast<double>(x[i]) * w[o * c.k + i];
      magnitude += std::fabs(static_cast<double>(x[i]) * w[o * c.k + i]);
    }
    // float rounding of at most k + 4 additions, each within 2^-24 of the partial sum.
    const double bound = magnitude * static_cast<double>(c.k + 4) * 6e-8 + 1e-7;
    ASSERT_NEAR(got[o], exact, bound) << "out " << o;
  }
}

// The one-row kernel and the several-row kernel (kernels/f32_gemm.h) sum in the same order, so
// a row's product is the same floats alone or among other rows: a sentence's translation does
// not depend on how many others are decoded beside it (batching, batch lanes).
TEST_P(F32GemvTest, MatchesTheSeveralRowKernelBitForBit) {
  const GemvCase c = GetParam();
  const size_t rows = 5;
  const std::vector<float> x = RandomFloats(rows * c.k, 7, 2.0f);
  const std::vector<float> w = RandomFloats(c.n * c.k, 8, 0.3f);
  const std::vector<float> bias = RandomFloats(c.n, 9, 0.5f);
  std::vector<float> several(rows * c.n), alone(rows * c.n), reference(rows * c.n);
  kernels::F32GemmArgs g;
  g.x = x.data();
  g.x_stride = c.k;
  g.rows = rows;
  g.k = c.k;
  g.w = w.data();
  g.bias = bias.data();
  g.y = several.data();
  g.y_stride = c.n;
  g.out_min = -std::numeric_limits<float>::infinity();
  g.out_max = std::numeric_limits<float>::infinity();
  kernels::F32Gemm(g, 0, c.n);
  g.y = reference.data();
  kernels::F32GemmReference(g, 0, c.n);
  for (size_t r = 0; r < rows; ++r) {
    kernels::F32GemvArgs a;
    a.x = x.data() + r * c.k;
    a.k = c.k;
    a.w = w.data();
    a.bias = bias.data();
    a.y = alone.data() + r * c.n;
    a.out_min = g.out_min;
    a.out_max = g.out_max;
    kernels::F32Gemv(a, 0, c.n);
  }
  ASSERT_EQ(alone, reference) << kernels::F32GemvKernelName();
  ASSERT_EQ(several, reference) << kernels::F32GemmKernelName();
}

TEST_P(F32GemvTest, ClampsToTheOutputRange) {
  const GemvCase c = GetParam();
  const std::vector<float> x = RandomFloats(c.k, 4, 2.0f);
  const std::vector<float> w = RandomFloats(c.n * c.k, 5, 0.3f);
  const std::vector<float> bias = RandomFloats(c.n, 6, 0.5f);
  kernels::F32GemvArgs a;
  a.x = x.data();
  a.k = c.k;
  a.w = w.data();
  a.bias = bias.data();
  a.out_min = -std::numeric_limits<float>::infinity();
  a.out_max = std::numeric_limits<float>::infinity();
  std::vector<float> free(c.n), relu(c.n);
  a.y = free.data();
  kernels::F32Gemv(a, 0, c.n);
  a.out_min = 0.0f;
  a.y = relu.data();
  kernels::F32Gemv(a, 0, c.n);
  for (size_t o = 0; o < c.n; ++o) EXPECT_EQ(relu[o], std::max(0.0f, free[o])) << "out " << o;
}

INSTANTIATE_TEST_SUITE_P(Shapes, F32GemvTest,
                         ::testing::Values(GemvCase{256, 768}, GemvCase{256, 8000},
                                           GemvCase{1024, 256}, GemvCase{96, 13},
                                           GemvCase{7, 5}, GemvCase{33, 17}, GemvCase{8, 8}));

}  // namespace
}  // namespace headwise
