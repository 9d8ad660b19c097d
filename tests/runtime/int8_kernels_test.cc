// Every int8 kernel family this CPU can run (kernels/int8_gemm.h: Int8Kernels()) against the
// reference loops: the products must be bit-identical to Int8GemmReference and the quantized
// rows byte-identical to QuantizeRowsReference, over shapes that exercise each family's tails
// (rows 1..33 against row tiles of 2 and 4, k not a multiple of the vector step, output ranges
// not a multiple of the 4-channel block and split where two threads would), extreme values
// (+-127 everywhere, int32 sums near 2^31), zero rows, rounding ties and subnormal rows.
// HEADWISE_EXPECT_INT8_KERNEL=<name> (set by the qemu CPU-model tests in tests/platforms)
// makes the dispatch test insist on the family the CPU should get.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/int8_gemm.h"

namespace headwise {
namespace {

using kernels::Int8GemmArgs;
using kernels::Int8Kernel;

std::vector<Int8Kernel> AllKernels() {
  size_t n = 0;
  const Int8Kernel* k = kernels::Int8Kernels(&n);
  return std::vector<Int8Kernel>(k, k + n);
}

TEST(Int8Dispatch, PortableLastAndTheFirstAvailableFamilyChosen) {
  const std::vector<Int8Kernel> all = AllKernels();
  ASSERT_FALSE(all.empty());
  EXPECT_STREQ(all.back().name, "portable");
  EXPECT_EQ(all.back().gemm, &kernels::Int8GemmReference);
  EXPECT_EQ(all.back().quantize, &kernels::QuantizeRowsReference);
  const Int8Kernel* first = nullptr;
  std::string names;
  for (const Int8Kernel& k : all) {
    names += std::string(" ") + k.name + (k.available() ? "(available)" : "");
    if (first == nullptr && k.available()) first = &k;
  }
  ASSERT_NE(first, nullptr) << names;
  // HEADWISE_INT8_KERNEL (int8_gemm.h) may pick another family this CPU runs.
  const char* forced = std::getenv("HEADWISE_INT8_KERNEL");
  const bool forced_available =
      forced != nullptr && std::any_of(all.begin(), all.end(), [&](const Int8Kernel& k) {
        return std::string(k.name) == forced && k.available();
      });
  EXPECT_STREQ(kernels::Int8GemmKernelName(), forced_available ? forced : first->name) << names;
  std::printf("int8 kernels:%s; dispatched: %s\n", names.c_str(), kernels::Int8GemmKernelName());
  // The families each architecture must have compiled in.
#if defined(__aarch64__)
  const char* expected[] = {"neon-dotprod", "neon"};
#elif defined(__arm__)
  const char* expected[] = {"neon-armv7"};
#elif defined(__x86_64__)
  const char* expected[] = {"amx", "avx512-vnni", "avx-vnni", "avx2"};
#else
  const char* expected[] = {"portable"};
#endif
  for (const char* e : expected) {
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const Int8Kernel& k) { return std::string(k.name) == e; }))
        << e << " is not compiled in:" << names;
  }
#if defined(__aarch64__)
  EXPECT_TRUE(all[1].available()) << "aarch64 always has NEON";
#endif
  if (const char* want = std::getenv("HEADWISE_EXPECT_INT8_KERNEL"); want != nullptr && *want != '\0') {
    EXPECT_STREQ(kernels::Int8GemmKernelName(), want) << names;
  }
}

class Int8KernelTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    const std::vector<Int8Kernel> all = AllKernels();
    ASSERT_LT(GetParam(), all.size());
    kernel_ = all[GetParam()];
    if (!kernel_.available()) {
      GTEST_SKIP() << kernel_.name << " not run: this CPU (or OS) lacks its extension"
                   << " (int8_gemm.h lists what each family needs)";
    }
  }
  Int8Kernel kernel_{};
};

struct Problem {
  size_t rows, k, out;
  std::vector<int8_t> xq, w;
  std::vector<float> x_scale, w_scale, bias;
};

Problem RandomProblem(size_t rows, size_t k, size_t out, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> q(-127, 127);
  std::uniform_real_distribution<float> s(0.001f, 0.05f), b(-2.0f, 2.0f);
  Problem p{rows, k, out, std::vector<int8_t>(rows * k), std::vector<int8_t>(out * k),
            std::vector<float>(rows), std::vector<float>(out), std::vector<float>(out)};
  for (int8_t& v : p.xq) v = static_cast<int8_t>(q(rng));
  for (int8_t& v : p.w) v = static_cast<int8_t>(q(rng));
  for (float& v : p.x_scale) v = s(rng);
  for (float& v : p.w_scale) v = s(rng);
  for (float& v : p.bias) v = b(rng);
  return p;
}

Int8GemmArgs ArgsOf(const Problem& p, float* y, size_t y_stride, float lo, float hi) {
  Int8GemmArgs a;
  a.xq = p.xq.data();
  a.x_scale = p.x_scale.data();
  a.rows = p.rows;
  a.k = p.k;
  a.w = p.w.data();
  a.w_scale = p.w_scale.data();
  a.bias = p.bias.data();
  a.y = y;
  a.y_stride = y_stride;
  a.out_min = lo;
  a.out_max = hi;
  return a;
}

// The kernel over [0, split) and [split, out) against the reference over [0, out), bit for bit,
// with nothing written between rows (y_stride > out).
void ExpectSameAsReference(const Int8Kernel& kernel, const Problem& p, size_t split, float lo,
                           float hi) {
  const size_t y_stride = p.out + 3;
  std::vector<float> got(p.rows * y_stride, -7.0f), want(got);
  kernel.gemm(ArgsOf(p, got.data(), y_stride, lo, hi), 0, split);
  kernel.gemm(ArgsOf(p, got.data(), y_stride, lo, hi), split, p.out);
  kernels::Int8GemmReference(ArgsOf(p, want.data(), y_stride, lo, hi), 0, p.out);
  if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0) {
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << kernel.name << ": rows " << p.rows << " k " << p.k << " out "
                                 << p.out << " split " << split << ", first difference at row "
                                 << i / y_stride << " channel " << i % y_stride;
    }
    FAIL() << kernel.name << ": a sign of zero differs (rows " << p.rows << " k " << p.k << ")";
  }
}

TEST_P(Int8KernelTest, ProductIsBitIdenticalToTheReferenceOverShapes) {
  const size_t ks[] = {1, 4, 8, 15, 16, 17, 31, 32, 33, 48, 63, 100, 256, 257};
  const size_t outs[] = {1, 3, 4, 5, 8, 9, 14};
  uint32_t seed = 1;
  for (size_t rows = 1; rows <= 33; ++rows) {
    for (size_t k : ks) {
      for (size_t out : outs) {
        const Problem p = RandomProblem(rows, k, out, seed++);
        // Split where a thread boundary could fall (odd on purpose), clamp as relu.
        ExpectSameAsReference(kernel_, p, out / 2 + (out > 2 ? 1 : 0), -INFINITY, INFINITY);
        if (HasFatalFailure()) return;
      }
    }
  }
  // Shapes of the shipped models (256 wide, FFN 1024, fused qkv) with relu's clamp.
  for (const auto [rows, k, out] : {std::array<size_t, 3>{1, 256, 768}, {4, 256, 1024},
                                    {9, 1024, 256}, {33, 512, 67}}) {
    ExpectSameAsReference(kernel_, RandomProblem(rows, k, out, seed++), 64, 0.0f, INFINITY);
    if (HasFatalFailure()) return;
  }
}

TEST_P(Int8KernelTest, ExtremeValuesZeroRowsAndSumsNearTwoToThe31) {
  for (size_t k : {16u, 47u, 1000u}) {
    Problem p = RandomProblem(6, k, 9, 100 + static_cast<uint32_t>(k));
    for (size_t i = 0; i < k; ++i) {
      p.xq[0 * k + i] = 127;                       // row 0: +127 everywhere
      p.xq[1 * k + i] = -127;                      // row 1: -127 everywhere
      p.xq[2 * k + i] = 0;                         // row 2: zeros (scale 0 as quantized)
      p.xq[3 * k + i] = (i % 2) ? 127 : -127;      // row 3: alternating
      p.w[0 * k + i] = 127;
      p.w[1 * k + i] = -127;
      p.w[2 * k + i] = (i % 3) ? -127 : 127;
      p.w[3 * k + i] = 0;
    }
    p.x_scale[2] = 0.0f;
    ExpectSameAsReference(kernel_, p, 4, -INFINITY, INFINITY);
    ExpectSameAsReference(kernel_, p, 1, -0.5f, 0.75f);  // most outputs clamped
    ExpectSameAsReference(kernel_, p, 7, -INFINITY, 0.0f);
    if (HasFatalFailure()) return;
  }
  // k = 2^17 - 1 (the largest the contract allows): 127 * 127 * k = 2114060287 < 2^31.
  const size_t k = (1u << 17) - 1;
  Problem p = RandomProblem(2, k, 5, 7);
  for (size_t i = 0; i < k; ++i) {
    p.xq[i] = 127;
    p.xq[k + i] = -127;
    for (size_t o = 0; o < 5; ++o) p.w[o * k + i] = o % 2 ? -127 : 127;
  }
  ExpectSameAsReference(kernel_, p, 2, -INFINITY, INFINITY);
}

TEST_P(Int8KernelTest, EmptyRangesAndNoRowsWriteNothing) {
  const Problem p = RandomProblem(3, 40, 8, 9);
  std::vector<float> y(3 * 8, -7.0f);
  kernel_.gemm(ArgsOf(p, y.data(), 8, -INFINITY, INFINITY), 5, 5);
  Problem none = p;
  none.rows = 0;
  kernel_.gemm(ArgsOf(none, y.data(), 8, -INFINITY, INFINITY), 0, 8);
  for (float v : y) ASSERT_EQ(v, -7.0f);
}

// Rows that exercise each quantizer's special cases; every row of `rows` is `cols` long.
std::vector<std::vector<float>> QuantizationRows(size_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  std::vector<std::vector<float>> rows;
  std::vector<float> r(cols);
  for (float& v : r) v = u(rng);
  rows.push_back(r);                          // ordinary
  rows.emplace_back(cols, 0.0f);              // all zero: scale 0
  std::vector<float> neg_zero(cols, -0.0f);
  rows.push_back(neg_zero);
  // Ties: the largest |x| is 127, so x * 127 / max is x itself and x.5 rounds to even.
  std::vector<float> ties(cols);
  const float tie_values[] = {127.0f, 2.5f, -3.5f, 0.5f, -0.5f, 1.5f, 126.5f, -126.5f, -127.0f, 0.0f};
  for (size_t c = 0; c < cols; ++c) ties[c] = tie_values[c % 10];
  if (cols > 0) ties[cols - 1] = cols % 2 ? 127.0f : -127.0f;
  rows.push_back(ties);
  // Huge and tiny magnitudes.
  std::vector<float> huge(cols), tiny(cols), subnormal(cols), mixed(cols), mixed_high(cols);
  for (size_t c = 0; c < cols; ++c) {
    const float f = u(rng) / 5.0f;
    huge[c] = f * 3.0e38f;
    tiny[c] = f * 1.0e-30f;            // normal, under 2^-99
    subnormal[c] = f * 1.0e-39f;       // every value subnormal
    mixed[c] = f * 1.0e-38f;           // largest normal (near 2^-126), others subnormal
    mixed_high[c] = c % 2 ? f * 1.0e-39f : f * 1.0e-20f;  // largest >= 2^-100, some subnormal
  }
  if (cols > 0) mixed[cols / 2] = 1.5e-38f;
  for (auto* v : {&huge, &tiny, &subnormal, &mixed, &mixed_high}) rows.push_back(*v);
  return rows;
}

TEST_P(Int8KernelTest, QuantizationIsByteIdenticalToTheReference) {
  std::vector<size_t> widths;
  for (size_t c = 1; c <= 40; ++c) widths.push_back(c);
  for (size_t c : {63u, 64u, 65u, 255u, 256u, 257u, 1000u, 2048u}) widths.push_back(c);
  for (size_t cols : widths) {
    const std::vector<std::vector<float>> rows = QuantizationRows(cols, static_cast<uint32_t>(cols));
    const size_t stride = cols + 2;
    std::vector<float> x(rows.size() * stride, 99.0f);  // padding the quantizer must not read
    for (size_t r = 0; r < rows.size(); ++r) std::copy(rows[r].begin(), rows[r].end(), x.begin() + r * stride);
    std::vector<int8_t> q(rows.size() * cols, 55), want(q);
    std::vector<float> s(rows.size(), -1.0f), want_s(s);
    kernel_.quantize(x.data(), rows.size(), cols, stride, q.data(), s.data());
    kernels::QuantizeRowsReference(x.data(), rows.size(), cols, stride, want.data(), want_s.data());
    for (size_t r = 0; r < rows.size(); ++r) {
      ASSERT_EQ(std::memcmp(&s[r], &want_s[r], sizeof(float)), 0)
          << kernel_.name << ": scale of row " << r << ", " << cols << " columns: " << s[r]
          << " vs " << want_s[r];
      for (size_t c = 0; c < cols; ++c) {
        ASSERT_EQ(q[r * cols + c], want[r * cols + c])
            << kernel_.name << ": row " << r << " column " << c << " of " << cols << ", x = "
            << rows[r][c];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, Int8KernelTest,
                         ::testing::Range(size_t{0}, [] {
                           size_t n = 0;
                           kernels::Int8Kernels(&n);
                           return n;
                         }()),
                         [](const ::testing::TestParamInfo<size_t>& param_info) {
                           size_t n = 0;
                           std::string name = kernels::Int8Kernels(&n)[param_info.param].name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace headwise
