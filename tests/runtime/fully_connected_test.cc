// The FullyConnected dispatcher (fc/fully_connected.h): which kernel path each weight format
// and row count gets (KernelName), that every path computes the fused product of its parts
// within rounding of a double-precision loop, and the creation errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/half.h"
#include "format/model_writer.h"
#include "format/weight_format.h"
#include "fc/fully_connected.h"
#include "kernels/f32_gemm.h"
#include "kernels/f32_gemv.h"
#include "kernels/int8_gemm.h"
#include "parallel.h"
#include "thread_pool.h"
#include "xnn_backend.h"
#include "tests/support/random_data.h"

namespace headwise {
namespace {

using testing::RandomFloats;

// Two fused parts [rows_a + rows_b, in] in one weight format, their stored bytes kept alive.
struct FusedWeights {
  std::vector<std::vector<float>> f32, bias;
  std::vector<std::vector<uint16_t>> f16;
  std::vector<std::vector<int8_t>> i8;
  std::vector<std::vector<float>> scale;
  std::vector<FcPart> parts;
  std::vector<std::vector<float>> effective;  // the F32 values each stored weight stands for
};

FusedWeights MakeWeights(DType type, size_t in, std::vector<size_t> rows) {
  FusedWeights w;
  const size_t n = rows.size();
  w.f32.resize(n), w.bias.resize(n), w.f16.resize(n), w.i8.resize(n), w.scale.resize(n);
  w.parts.resize(n), w.effective.resize(n);
  for (size_t p = 0; p < n; ++p) {
    w.f32[p] = RandomFloats(rows[p] * in, 10 + static_cast<uint32_t>(p), 0.3f);
    w.bias[p] = RandomFloats(rows[p], 20 + static_cast<uint32_t>(p), 0.5f);
    const uint32_t r = static_cast<uint32_t>(rows[p]), c = static_cast<uint32_t>(in);
    w.effective[p] = w.f32[p];
    switch (type) {
      case DType::kF32:
        w.parts[p].weight = {w.f32[p].data(), type, r, c, nullptr};
        break;
      case DType::kF16:
        for (float& v : w.effective[p]) {
          w.f16[p].push_back(FloatToF16(v));
          v = F16ToFloat(w.f16[p].back());
        }
        w.parts[p].weight = {w.f16[p].data(), type, r, c, nullptr};
        break;
      case DType::kI8:
        w.scale[p] = QuantizeRowsI8(w.f32[p].data(), r, c, &w.i8[p]);
        for (size_t i = 0; i < w.effective[p].size(); ++i) {
          w.effective[p][i] = static_cast<float>(w.i8[p][i]) * w.scale[p][i / in];
        }
        w.parts[p].weight = {w.i8[p].data(), type, r, c, w.scale[p].data()};
        break;
    }
    w.parts[p].bias = {w.bias[p].data(), DType::kF32, 1, r, nullptr};
  }
  return w;
}

struct PathCase {
  DType type;
  size_t rows;
};

class FullyConnectedPathTest : public ::testing::TestWithParam<PathCase> {};

TEST_P(FullyConnectedPathTest, NamesItsPathAndComputesTheFusedProduct) {
  ASSERT_TRUE(InitXnnpack().ok());
  const PathCase c = GetParam();
  const size_t in = 40;
  FusedWeights w = MakeWeights(c.type, in, {24, 9});
  const size_t out = 33;
  std::vector<int8_t> q(c.rows * in);
  std::vector<float> qs(c.rows);
  const Int8Scratch scratch{q.data(), qs.data(), c.rows, in};
  FcParams params;
  params.int8_scratch = &scratch;
  auto fc = FullyConnected::Create(w.parts.data(), w.parts.size(), params, "test fc");
  ASSERT_TRUE(fc.ok()) << fc.status().ToString();
  EXPECT_EQ(fc->input_channels(), in);
  EXPECT_EQ(fc->output_channels(), out);

  // F32 and F16 parts are read in place where kernels/f32_gemm.h has a vector kernel (one F32
  // row by the gemv beside it), else XNNPACK packs them (F16 widened: no f16 scratch given).
  std::string want;
  if (c.type == DType::kI8) {
    want = std::string("int8: ") + kernels::Int8GemmKernelName();
  } else if (!kernels::HaveFastF32Gemm()) {
    want = "fp32: xnnpack";
  } else if (c.type == DType::kF32 && c.rows == 1 && kernels::HaveFastF32Gemv()) {
    want = "fp32: f32-gemv-avx2";
  } else {
    want = std::string("fp32: ") + kernels::F32GemmKernelName();
  }
  EXPECT_EQ(fc->KernelName(c.rows), want);

  const std::vector<float> x = RandomFloats(c.rows * in, 3, 1.0f);
  std::vector<float> y(c.rows * out, -7.0f);
  ASSERT_TRUE(fc->Run(c.rows, x.data(), y.data(), nullptr).ok());
  for (size_t r = 0; r < c.rows; ++r) {
    size_t o = 0;
    for (size_t p = 0; p < w.parts.size(); ++p) {
      for (size_t j = 0; j < w.parts[p].weight.rows; ++j, ++o) {
        double ref = w.bias[p][j], mag = std::fabs(w.bias[p][j]);
        for (size_t i = 0; i < in; ++i) {
          ref += double(x[r * in + i]) * w.effective[p][j * in + i];
          mag += std::fabs(double(x[r * in + i]) * w.effective[p][j * in + i]);
        }
        // int8 also quantizes the activations: half a step of 127 per element.
        const double bound = c.type == DType::kI8 ? mag * 0.02 + 1e-4 : mag * 1e-5 + 1e-6;
        ASSERT_NEAR(y[r * out + o], ref, bound) << "row " << r << " output " << o;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, FullyConnectedPathTest,
    ::testing::Values(PathCase{DType::kF32, 1}, PathCase{DType::kF32, 3},
                      PathCase{DType::kF16, 1}, PathCase{DType::kF16, 3},
                      PathCase{DType::kI8, 1}, PathCase{DType::kI8, 3}),
    [](const ::testing::TestParamInfo<PathCase>& i) {
      const char* format = i.param.type == DType::kF32 ? "f32"
                      : i.param.type == DType::kF16 ? "f16" : "i8";
      return std::string(format) + "_rows" + std::to_string(i.param.rows);
    });

// The int8 operator's output has the same bits on one thread and on pools of 2 and 3 threads,
// with yielding and with spinning workers (the pool splits output channels in tiles; every
// channel's sum and finish are the same whatever the split), and the same bits as the reference
// loop on the quantized rows: a translation does not depend on the thread count, the workers'
// wait or the kernel family this CPU runs.
TEST(FullyConnected, Int8OutputIsTheSameOnAnyThreadCount) {
  const size_t in = 520;  // not a multiple of 64
  FusedWeights w = MakeWeights(DType::kI8, in, {1500, 523});
  const size_t out = 2023;
  auto any_pool = ThreadPool::Create(2);
  ASSERT_TRUE(any_pool.ok());
  pthreadpool* const kAnyPool = any_pool->get();
  for (size_t rows : {1u, 4u, 9u, 33u}) {
    // Spinning workers split every one of these products; yielding ones, for which an int8
    // multiply-add counts an eighth (parallel.h), from 9 rows on.
    ASSERT_TRUE(Workers(kAnyPool, true).Split(rows * in * out, WorkKind::kInt8)) << rows;
    ASSERT_EQ(Workers(kAnyPool, false).Split(rows * in * out, WorkKind::kInt8), rows >= 9) << rows;
    std::vector<int8_t> q(rows * in);
    std::vector<float> qs(rows);
    const Int8Scratch scratch{q.data(), qs.data(), rows, in};
    FcParams params;
    params.int8_scratch = &scratch;
    params.output_min = -0.25f;  // a clamp on one side, as fc1's ReLU has
    auto fc = FullyConnected::Create(w.parts.data(), w.parts.size(), params, "threads fc");
    ASSERT_TRUE(fc.ok()) << fc.status().ToString();
    const std::vector<float> x = RandomFloats(rows * in, 7 + static_cast<uint32_t>(rows), 2.0f);

    // The reference: the operator's concatenated weights through the portable loop.
    std::vector<int8_t> wq, xq(rows * in);
    std::vector<float> ws, b, xs(rows);
    for (size_t p = 0; p < w.parts.size(); ++p) {
      wq.insert(wq.end(), w.i8[p].begin(), w.i8[p].end());
      ws.insert(ws.end(), w.scale[p].begin(), w.scale[p].end());
      b.insert(b.end(), w.bias[p].begin(), w.bias[p].end());
    }
    kernels::QuantizeRowsReference(x.data(), rows, in, in, xq.data(), xs.data());
    std::vector<float> want(rows * out);
    kernels::Int8GemmReference({xq.data(), xs.data(), rows, in, wq.data(), ws.data(), b.data(),
                                want.data(), out, -0.25f, INFINITY},
                               0, out);
    for (int threads : {1, 2, 3}) {
      auto pool = ThreadPool::Create(threads);
      ASSERT_TRUE(pool.ok());
      for (bool spin : {false, true}) {
        std::vector<float> y(rows * out, -7.0f);
        ASSERT_TRUE(fc->Run(rows, x.data(), y.data(), Workers(pool->get(), spin)).ok());
        ASSERT_EQ(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)), 0)
            << rows << " rows, " << threads << " threads, spin " << spin << ", kernel "
            << kernels::Int8GemmKernelName();
      }
    }
  }
}

TEST(FullyConnected, CreationErrorsNameTheOperator) {
  ASSERT_TRUE(InitXnnpack().ok());
  FusedWeights i8 = MakeWeights(DType::kI8, 16, {8});
  auto no_scratch = FullyConnected::Create(i8.parts.data(), 1, FcParams{}, "enc 0 fc1");
  ASSERT_FALSE(no_scratch.ok());
  EXPECT_NE(no_scratch.status().message().find("enc 0 fc1: int8 weights need the Translator's int8 scratch"),
            std::string::npos) << no_scratch.status().ToString();

  FusedWeights f32 = MakeWeights(DType::kF32, 16, {8});
  FusedWeights wide = MakeWeights(DType::kF32, 24, {8});
  const FcPart mixed[] = {f32.parts[0], wide.parts[0]};
  auto disagree = FullyConnected::Create(mixed, 2, FcParams{}, "qkv");
  ASSERT_FALSE(disagree.ok());
  EXPECT_EQ(disagree.status().message(), "qkv: fused parts disagree on shapes");

  FullyConnected none;
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.KernelName(1), "none");
  float x = 0, y = 0;
  EXPECT_FALSE(none.Run(1, &x, &y, nullptr).ok());
}

}  // namespace
}  // namespace headwise
