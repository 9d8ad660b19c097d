// Each kernel against a plain reference loop in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/softmax.h"
#include "kernels/vec_avx2.h"
#include "kernels/vec_avx512.h"
#include "kernels/vec_exp.h"
#include "tests/runtime/reference_model.h"
#include "tests/support/random_data.h"

namespace headwise {
namespace {

// Uniform in [lo, hi), [-3, 3) unless given.
std::vector<float> Random(size_t n, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  return testing::RandomFloats(n, seed, lo, hi);
}

class KernelSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(KernelSizes, AddLayerNormMatchesReference) {
  const size_t dim = GetParam(), rows = 3;
  std::vector<float> x = Random(rows * dim, 1), res = Random(rows * dim, 2);
  const std::vector<float> g = Random(dim, 3), b = Random(dim, 4);
  const std::vector<float> x0 = x;
  kernels::AddLayerNorm(x.data(), res.data(), dim, g.data(), b.data(), rows, dim, 1e-5f);
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (size_t j = 0; j < dim; ++j) mean += double{x0[r * dim + j]} + res[r * dim + j];
    mean /= static_cast<double>(dim);
    for (size_t j = 0; j < dim; ++j) {
      const double c = double{x0[r * dim + j]} + res[r * dim + j] - mean;
      var += c * c;
    }
    var /= static_cast<double>(dim);
    for (size_t j = 0; j < dim; ++j) {
      const double want = (double{x0[r * dim + j]} + res[r * dim + j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
      EXPECT_NEAR(x[r * dim + j], want, 1e-5 * (1 + std::fabs(want))) << "row " << r << " col " << j;
    }
  }
}

TEST_P(KernelSizes, AddLayerNormBroadcastsAStrideZeroResidual) {
  const size_t dim = GetParam(), rows = 4;
  std::vector<float> x = Random(rows * dim, 5), bias = Random(dim, 6);
  const std::vector<float> g = Random(dim, 7), b = Random(dim, 8);
  std::vector<float> expanded(rows * dim);
  for (size_t r = 0; r < rows; ++r) std::copy(bias.begin(), bias.end(), expanded.begin() + static_cast<long>(r * dim));
  std::vector<float> y = x;
  kernels::AddLayerNorm(x.data(), bias.data(), 0, g.data(), b.data(), rows, dim, 1e-5f);
  kernels::AddLayerNorm(y.data(), expanded.data(), dim, g.data(), b.data(), rows, dim, 1e-5f);
  EXPECT_EQ(x, y);
}

TEST_P(KernelSizes, SoftmaxMatchesReference) {
  const size_t n = GetParam();
  std::vector<float> x = Random(n, 9, -20.0f, 20.0f);
  const std::vector<float> x0 = x;
  kernels::SoftmaxInPlace(x.data(), n);
  double m = -1e300, sum = 0;
  for (float v : x0) m = std::max(m, double{v});
  for (float v : x0) sum += std::exp(v - m);
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    const double want = std::exp(x0[i] - m) / sum;
    EXPECT_NEAR(x[i], want, 1e-6 + 1e-5 * want) << i;
    total += x[i];
  }
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST_P(KernelSizes, LogSoftmaxNormalizerMatchesReference) {
  const size_t n = GetParam();
  std::vector<float> x = Random(n, 10, -30.0f, 30.0f);
  if (n > 1) x[n / 2] = -std::numeric_limits<float>::infinity();  // masked (PAD): contributes 0
  const kernels::LogSoftmaxNorm norm = kernels::LogSoftmaxNormalizer(x.data(), n);
  double m = -1e300, sum = 0;
  for (float v : x) m = std::max(m, double{v});
  for (float v : x) sum += std::exp(v - m);
  EXPECT_EQ(norm.max, static_cast<float>(m));
  EXPECT_NEAR(norm.log_sum, std::log(sum), 1e-5);
}

TEST_P(KernelSizes, ExpIsAccurateAndMasksMinusInfinity) {
  const size_t n = GetParam();
  std::vector<float> x = Random(n, 11, -87.0f, 88.0f);
  x[0] = -std::numeric_limits<float>::infinity();
  const std::vector<float> x0 = x;
  kernels::ExpInPlace(x.data(), n);
  EXPECT_EQ(x[0], 0.0f);
  for (size_t i = 1; i < n; ++i) {
    const double want = std::exp(double{x0[i]});
    EXPECT_NEAR(x[i], want, want * 4e-7) << "exp(" << x0[i] << ")";
  }
}

TEST_P(KernelSizes, FirstIndexOfFindsTheLowestMatch) {
  const size_t n = GetParam();
  std::vector<float> x = Random(n, 31);
  for (size_t at = 0; at < n; ++at) {
    std::vector<float> y = x;
    y[at] = 100.0f;
    if (at + 3 < n) y[at + 3] = 100.0f;  // a later tie does not count
    EXPECT_EQ(kernels::FirstIndexOf(y.data(), n, 100.0f), at) << "n " << n;
  }
  EXPECT_EQ(kernels::FirstIndexOf(x.data(), n, 1000.0f), n - 1) << "absent: the last index";
}

TEST_P(KernelSizes, FirstScoreAboveMatchesTheScalarScores) {
  const size_t n = GetParam();
  std::vector<float> x = Random(n, 37, -20.0f, 5.0f);
  x[0] = -std::numeric_limits<float>::infinity();  // the masked PAD logit
  if (n > 5) x[5] = std::numeric_limits<float>::quiet_NaN();
  const float base = -3.25f, max = 5.5f, log_sum = 1.75f;
  const auto score = [&](size_t i) { return base + ((x[i] - max) - log_sum); };
  for (const float threshold : {-1e30f, -30.0f, -12.5f, -8.0f, -std::numeric_limits<float>::infinity(), 100.0f}) {
    for (size_t from = 0; from <= n; from += 1 + n / 7) {
      size_t want = from;
      while (want < n && !(score(want) > threshold)) ++want;
      EXPECT_EQ(kernels::FirstScoreAbove(x.data(), from, n, base, max, log_sum, threshold), want)
          << "n " << n << " from " << from << " threshold " << threshold;
    }
  }
  // A threshold equal to a candidate's score: only a strictly greater score qualifies.
  const size_t last = n - 1;
  if (!std::isnan(x[last]) && std::isfinite(x[last])) {
    EXPECT_EQ(kernels::FirstScoreAbove(x.data(), last, n, base, max, log_sum, score(last)), n);
  }
}

TEST_P(KernelSizes, ActivationsMatchReference) {
  const size_t n = GetParam();
  const std::vector<float> x0 = Random(n, 12, -10.0f, 10.0f);
  std::vector<float> relu = x0, swish = x0, gelu = x0;
  kernels::ReluInPlace(relu.data(), n);
  kernels::SwishInPlace(swish.data(), n);
  kernels::GeluInPlace(gelu.data(), n);
  for (size_t i = 0; i < n; ++i) {
    const double v = x0[i];
    EXPECT_EQ(relu[i], v > 0 ? x0[i] : 0.0f);
    EXPECT_NEAR(swish[i], v / (1 + std::exp(-v)), 1e-6 * (1 + std::fabs(v)));
    EXPECT_NEAR(gelu[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6 * (1 + std::fabs(v)));
  }
  // The model's activation reaches its kernel (layer_common.cc dispatches through it).
  for (const auto& [a, want] : {std::pair<Activation, const std::vector<float>*>{
                                    Activation::kRelu, &relu},
                                {Activation::kSwish, &swish},
                                {Activation::kGelu, &gelu}}) {
    std::vector<float> y = x0;
    kernels::ApplyActivation(a, y.data(), n);
    EXPECT_EQ(y, *want) << ActivationName(a);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, KernelSizes, ::testing::Values(1, 3, 4, 7, 16, 33, 512));

// The portable normaliser and swish, written out here (baseline x86-64 or the target's own
// vector unit, no fused multiply-adds): every SIMD path must give exactly these floats.
// The portable maximum: a 4-lane running maximum, its lanes, then the rest one by one.
float PortableMax(const std::vector<float>& x) {
  const size_t n = x.size();
  float m = -std::numeric_limits<float>::infinity();
  kernels::V4 vm = kernels::V4{} + m;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const kernels::V4 v = kernels::LoadV4(x.data() + i);
    vm = v > vm ? v : vm;
  }
  for (int k = 0; k < 4; ++k) m = vm[k] > m ? vm[k] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

kernels::LogSoftmaxNorm PortableLogSoftmaxNorm(const std::vector<float>& x) {
  const size_t n = x.size();
  const float m = PortableMax(x);
  kernels::V4 acc0 = {}, acc1 = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    acc0 += kernels::ExpV4(kernels::LoadV4(x.data() + i) - m);
    acc1 += kernels::ExpV4(kernels::LoadV4(x.data() + i + 4) - m);
  }
  for (; i + 4 <= n; i += 4) acc0 += kernels::ExpV4(kernels::LoadV4(x.data() + i) - m);
  float sum = kernels::SumV4(acc0 + acc1);
  for (; i < n; ++i) sum += kernels::ExpV4(kernels::V4{} + (x[i] - m))[0];
  return {m, std::log(sum)};
}

// The portable softmax (softmax.cc without SIMD): the 4-lane maximum, exponentials summed in
// one 4-lane accumulator and then one by one, x scaled by the sum's inverse.
std::vector<float> PortableSoftmax(std::vector<float> x) {
  const size_t n = x.size();
  const float m = PortableMax(x);
  kernels::V4 acc = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const kernels::V4 e = kernels::ExpV4(kernels::LoadV4(x.data() + i) - m);
    kernels::StoreV4(x.data() + i, e);
    acc += e;
  }
  float sum = kernels::SumV4(acc);
  for (; i < n; ++i) sum += (x[i] = kernels::ExpV4(kernels::V4{} + (x[i] - m))[0]);
  const float inv = 1.0f / sum;
  for (float& v : x) v *= inv;
  return x;
}

std::vector<float> PortableSwish(std::vector<float> x) {
  size_t i = 0;
  for (; i + 4 <= x.size(); i += 4) {
    const kernels::V4 v = kernels::LoadV4(x.data() + i);
    kernels::StoreV4(x.data() + i, v / (kernels::ExpV4(-v) + 1.0f));
  }
  for (; i < x.size(); ++i) {
    const kernels::V4 v = kernels::V4{} + x[i];
    x[i] = (v / (kernels::ExpV4(-v) + 1.0f))[0];
  }
  return x;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The dispatched attention softmax (AVX-512, AVX2 or portable) against the portable floats, at
// every length of an attention row up to 70 (every tail of 16-, 8- and 4-value blocks), with a
// masked (-inf) entry and without.
TEST(SimdPaths, SoftmaxGivesThePortableFloats) {
  for (size_t n = 1; n <= 70; ++n) {
    for (bool masked : {false, true}) {
      std::vector<float> x = Random(n, 90 + static_cast<uint32_t>(n), -30.0f, 30.0f);
      if (masked && n > 1) x[n / 2] = -std::numeric_limits<float>::infinity();
      const std::vector<float> want = PortableSoftmax(x);
      kernels::SoftmaxInPlace(x.data(), n);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(SameBits(x[i], want[i])) << "n " << n << " i " << i << ": " << x[i]
                                             << " against " << want[i];
      }
    }
  }
}

// The dispatched kernels (AVX-512, AVX2 or portable, whichever this CPU runs) against the
// portable floats, over lengths that end in every tail (16- and 8-value blocks, 4, scalars).
TEST(SimdPaths, NormaliserAndSwishGiveThePortableFloats) {
  for (size_t n = 1; n <= 70; ++n) {
    for (size_t big : {size_t{0}, size_t{8000}, size_t{8003}}) {
      const size_t len = big != 0 ? big + (n % 16) : n;
      std::vector<float> x = Random(len, 40 + static_cast<uint32_t>(n), -30.0f, 30.0f);
      x[len / 2] = -std::numeric_limits<float>::infinity();
      const kernels::LogSoftmaxNorm want = PortableLogSoftmaxNorm(x);
      const kernels::LogSoftmaxNorm got = kernels::LogSoftmaxNormalizer(x.data(), len);
      ASSERT_TRUE(SameBits(got.max, want.max) && SameBits(got.log_sum, want.log_sum))
          << "n " << len << ": " << got.log_sum << " against " << want.log_sum;
      // A maximum of zero, both signs present: the sign the portable order picks.
      std::vector<float> z = x;
      for (float& v : z) v = -std::fabs(v);
      z[len / 3] = n % 2 == 0 ? -0.0f : 0.0f;
      z[len - 1] = n % 2 == 0 ? 0.0f : -0.0f;
      const kernels::LogSoftmaxNorm zwant = PortableLogSoftmaxNorm(z);
      const kernels::LogSoftmaxNorm zgot = kernels::LogSoftmaxNormalizer(z.data(), len);
      ASSERT_TRUE(SameBits(zgot.max, zwant.max) && SameBits(zgot.log_sum, zwant.log_sum))
          << "n " << len << " zero maximum: " << zgot.max << " against " << zwant.max;
      // (Not -0: the AVX2 loop's scalar tail turns it into +0 where the 4-lane loop keeps it.)
      x[len / 2] = 0.0f;
      const std::vector<float> swish_want = PortableSwish(x);
      std::vector<float> swish = x;
      kernels::SwishInPlace(swish.data(), len);
      for (size_t i = 0; i < len; ++i) {
        ASSERT_TRUE(SameBits(swish[i], swish_want[i])) << "n " << len << " i " << i;
      }
    }
  }
}

#ifdef HEADWISE_HAVE_AVX2_PATHS
HEADWISE_AVX2 void ExpV8Rows(const float* in, float* out, size_t n) {
  for (size_t i = 0; i < n; i += 8) kernels::StoreV8(out + i, kernels::ExpV8(kernels::LoadV8(in + i)));
}

#ifdef HEADWISE_HAVE_AVX512_PATHS
HEADWISE_AVX512 void ExpV16Rows(const float* in, float* out, size_t n) {
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(out + i, kernels::ExpV16(_mm512_loadu_ps(in + i)));
}
#endif

// The AVX2 and AVX-512 exp (softmax, log-softmax, swish) must give the 4-lane code's floats, so
// results do not depend on the CPU: no fused multiply-adds may creep into them.
TEST(ExpAvx2, GivesTheSameFloatsAsExpV4) {
  if (!kernels::CpuHasAvx2Fma()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  std::vector<float> x = Random(1 << 16, 21, -100.0f, 100.0f);
  x[0] = -std::numeric_limits<float>::infinity();
  x[1] = 0.0f;
  x[2] = 88.5f;
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[4] = std::numeric_limits<float>::infinity();
  x[5] = -87.33654475f;
  x[6] = 88.0f;
  x[7] = -0.0f;
  // Around every input whose x / ln 2 + 0.5 is an integer (ExpV8's floor against ExpV4's
  // truncation and correction), on both sides by one ulp.
  size_t at = 8;
  for (int k = -126; k <= 128 && at + 3 <= x.size(); ++k) {
    const float v = (static_cast<float>(k) - 0.5f) / 1.44269504088896341f;
    x[at++] = v;
    x[at++] = std::nextafter(v, -INFINITY);
    x[at++] = std::nextafter(v, INFINITY);
  }
  std::vector<float> v4(x.size()), v8(x.size());
  for (size_t i = 0; i < x.size(); i += 4) kernels::StoreV4(v4.data() + i, kernels::ExpV4(kernels::LoadV4(x.data() + i)));
  ExpV8Rows(x.data(), v8.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(SameBits(v8[i], v4[i])) << "exp(" << x[i] << "): " << v8[i] << " against " << v4[i];
  }
#ifdef HEADWISE_HAVE_AVX512_PATHS
  if (!kernels::CpuHasAvx512()) GTEST_SKIP() << "no AVX-512 on this CPU: ExpV16 not checked";
  std::vector<float> v16(x.size());
  ExpV16Rows(x.data(), v16.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(SameBits(v16[i], v4[i])) << "exp(" << x[i] << "): " << v16[i] << " against " << v4[i];
  }
#endif
}
#endif

// Attention over h kept heads, including h = 0 (writes nothing).
struct AttentionCase {
  size_t heads, head_dim, queries, keys;
};
class AttentionTest : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionTest, MatchesReference) {
  const AttentionCase c = GetParam();
  const size_t inner = c.heads * c.head_dim;
  // Strided like the fused projections: q rows in [q | k | v] rows of 3 * inner, k/v likewise.
  const size_t stride = 3 * inner + 1;
  const std::vector<float> qkv = Random(std::max(c.queries, c.keys) * stride + 1, 13);
  const float* q = qkv.data();
  const float* k = qkv.data() + inner;
  const float* v = qkv.data() + 2 * inner;
  const size_t out_stride = inner + 2;
  std::vector<float> out(c.queries * out_stride + 1, 42.0f), scores(c.keys);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  kernels::Attention(q, stride, c.queries, k, stride, v, stride, c.keys,
                     {c.heads, c.head_dim, scale, c.head_dim}, out.data(), out_stride, scores.data());
  // The same keys and values head-major ([head][key][head_dim], the caches' layout) give
  // bit-identical results.
  std::vector<float> kt(c.heads * c.keys * c.head_dim + 1), vt(kt.size());
  for (size_t h = 0; h < c.heads; ++h) {
    for (size_t j = 0; j < c.keys; ++j) {
      for (size_t e = 0; e < c.head_dim; ++e) {
        kt[(h * c.keys + j) * c.head_dim + e] = k[j * stride + h * c.head_dim + e];
        vt[(h * c.keys + j) * c.head_dim + e] = v[j * stride + h * c.head_dim + e];
      }
    }
  }
  std::vector<float> out_t(out.size(), 42.0f);
  kernels::Attention(q, stride, c.queries, kt.data(), c.head_dim, vt.data(), c.head_dim, c.keys,
                     {c.heads, c.head_dim, scale, c.keys * c.head_dim}, out_t.data(), out_stride,
                     scores.data());
  EXPECT_EQ(out_t, out);
  for (size_t i = 0; i < c.queries; ++i) {
    for (size_t h = 0; h < c.heads; ++h) {
      std::vector<double> s(c.keys);
      double m = -1e300, sum = 0;
      for (size_t j = 0; j < c.keys; ++j) {
        double dot = 0;
        for (size_t e = 0; e < c.head_dim; ++e) dot += double{q[i * stride + h * c.head_dim + e]} * k[j * stride + h * c.head_dim + e];
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      for (double& e : s) sum += (e = std::exp(e - m));
      for (size_t e = 0; e < c.head_dim; ++e) {
        double want = 0;
        for (size_t j = 0; j < c.keys; ++j) want += s[j] / sum * v[j * stride + h * c.head_dim + e];
        EXPECT_NEAR(out[i * out_stride + h * c.head_dim + e], want, 1e-5) << "q " << i << " head " << h;
      }
    }
    // Columns past the kept heads are never written.
    EXPECT_EQ(out[i * out_stride + inner], 42.0f);
    EXPECT_EQ(out[i * out_stride + inner + 1], 42.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(Heads, AttentionTest,
                         ::testing::Values(AttentionCase{0, 8, 3, 5}, AttentionCase{1, 8, 1, 1},
                                           AttentionCase{3, 4, 5, 7}, AttentionCase{2, 64, 4, 33},
                                           AttentionCase{5, 3, 2, 9},
                                           // head_dim 16 / 32 / 64 take the AVX2 kernel on
                                           // x86: full 8-key blocks and a tail.
                                           AttentionCase{3, 32, 1, 33}, AttentionCase{2, 16, 3, 16},
                                           AttentionCase{1, 32, 2, 64}));

// Keys and values read through a block table (a beam's cache history shared with the beams it
// split from, decoder.h kv_block) give the floats of the same keys copied side by side, on the
// AVX2 head sizes (16, 32, 64) and the portable loop (6), at lengths with every tail.
TEST(AttentionBlocksTest, KeysThroughABlockTableEqualTheKeysCopied) {
  for (size_t hd : {size_t{6}, size_t{16}, size_t{32}, size_t{64}}) {
    const size_t heads = 3, T = 24, blocks = 4, inner = heads * hd;
    // Cache layout [block][head][T][hd], as the decoder's self-attention cache.
    const std::vector<float> k = Random(blocks * T * inner, 51), v = Random(blocks * T * inner, 52);
    const std::vector<float> q = Random(inner, 53);
    const kernels::AttentionShape shape{heads, hd, 0.35f, T * hd};
    std::mt19937 rng(54);
    for (size_t keys = 1; keys <= T; ++keys) {
      std::vector<int32_t> block(keys);
      for (int32_t& b : block) b = static_cast<int32_t>(rng() % blocks);
      std::vector<float> kc(T * inner), vc(T * inner);  // one block: key j from block[j]
      for (size_t h = 0; h < heads; ++h) {
        for (size_t j = 0; j < keys; ++j) {
          const size_t from = static_cast<size_t>(block[j]) * T * inner + h * T * hd + j * hd;
          std::copy_n(k.begin() + static_cast<long>(from), hd, kc.begin() + static_cast<long>(h * T * hd + j * hd));
          std::copy_n(v.begin() + static_cast<long>(from), hd, vc.begin() + static_cast<long>(h * T * hd + j * hd));
        }
      }
      std::vector<float> got(inner), want(inner), scores(keys);
      for (size_t h = 0; h < heads; ++h) {
        kernels::AttentionHead(h, q.data(), inner, 1, k.data(), hd, v.data(), hd, keys, shape,
                               got.data(), inner, scores.data(), block.data(), T * inner);
        kernels::AttentionHead(h, q.data(), inner, 1, kc.data(), hd, vc.data(), hd, keys, shape,
                               want.data(), inner, scores.data());
      }
      ASSERT_EQ(std::memcmp(got.data(), want.data(), inner * sizeof(float)), 0)
          << "head_dim " << hd << ", " << keys << " keys";
    }
  }
}

TEST(EmbeddingTest, PositionsMatchMarianSinusoids) {
  for (size_t dim : {8u, 9u, 16u}) {
    const size_t n = 50;
    std::vector<float> table(n * dim);
    kernels::SinusoidalPositions(n, dim, table.data());
    const testing::Matrix want = testing::ReferenceModel::Positions(n, dim);
    for (size_t i = 0; i < n * dim; ++i) EXPECT_EQ(table[i], static_cast<float>(want[i])) << "dim " << dim << " i " << i;
  }
}

TEST(EmbeddingTest, EmbedTokensAddsScaledRowsAndPositions) {
  const size_t V = 7, d = 5;
  const std::vector<float> embed = Random(V * d, 14), pos = Random(4 * d, 15);
  const std::vector<int32_t> ids = {3, 0, 6, 3};
  std::vector<float> out(ids.size() * d);
  kernels::EmbedTokens(embed.data(), ids.data(), ids.size(), d, 2.5f, pos.data(), d, out.data());
  for (size_t r = 0; r < ids.size(); ++r) {
    for (size_t j = 0; j < d; ++j) {
      EXPECT_EQ(out[r * d + j], embed[static_cast<size_t>(ids[r]) * d + j] * 2.5f + pos[r * d + j]);
    }
  }
  // Stride 0: every row gets the same position (one decoder step).
  kernels::EmbedTokens(embed.data(), ids.data(), ids.size(), d, 1.0f, pos.data() + 2 * d, 0, out.data());
  for (size_t r = 0; r < ids.size(); ++r) {
    for (size_t j = 0; j < d; ++j) EXPECT_EQ(out[r * d + j], embed[static_cast<size_t>(ids[r]) * d + j] + pos[2 * d + j]);
  }
}

}  // namespace
}  // namespace headwise
