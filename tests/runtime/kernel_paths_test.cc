// Translator::kernel_paths(): the kernel each weight format's matrix products run, as the
// operators were created (fc/, kernels/). The int8 model must name the family Int8Gemm
// dispatches to on this CPU (and, under the qemu CPU-model tests of tests/platforms,
// HEADWISE_EXPECT_INT8_KERNEL's); fp32 names the in-place kernels (kernels/f32_gemm.h and the
// one-row gemv) where this CPU has them, else XNNPACK; fp16 names XNNPACK's f16 operators where
// the f16 path is on.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "kernels/f32_gemm.h"
#include "kernels/f32_gemv.h"
#include "kernels/int8_gemm.h"
#include "tests/runtime/test_model.h"
#include "xnn_backend.h"

namespace headwise {
namespace {

std::unique_ptr<testing::TestModel> Build(WeightFormat f) {
  testing::ModelOptions o;
  o.d_model = 32;
  o.vocab = 40;
  o.pad = o.start = 39;
  o.kept = {{0, 2}, {}, {1}, {}, {}, {2, 3}};  // pruned and empty blocks: no operator there
  o.weights = f;
  return testing::BuildModel(o);
}

std::string PathsOf(const testing::TestModel& m, Fp16Compute fp16 = Fp16Compute::kAuto) {
  TranslatorLimits limits;
  limits.max_batch = 2;
  limits.max_source_tokens = 8;
  limits.max_target_tokens = 8;
  limits.fp16_compute = fp16;
  auto tr = Translator::Create(m.model, limits);
  EXPECT_TRUE(tr.ok()) << tr.status().ToString();
  return tr.ok() ? (*tr)->kernel_paths() : "";
}

TEST(KernelPaths, Int8ModelNamesTheDispatchedFamily) {
  auto m = Build(WeightFormat::kI8);
  ASSERT_TRUE(m->model);
  const std::string paths = PathsOf(*m);
  std::printf("int8 model: kernels %s\n", paths.c_str());
  EXPECT_EQ(paths, std::string("int8: ") + kernels::Int8GemmKernelName());
  if (const char* want = std::getenv("HEADWISE_EXPECT_INT8_KERNEL"); want != nullptr && *want != '\0') {
    EXPECT_EQ(paths, std::string("int8: ") + want);
  }
}

TEST(KernelPaths, Fp32AndFp16ModelsNameTheInPlaceKernelsOrXnnpack) {
  auto m32 = Build(WeightFormat::kF32);
  auto m16 = Build(WeightFormat::kF16);
  ASSERT_TRUE(m32->model && m16->model);
  // Where kernels/f32_gemm.h has a vector kernel, F32 and F16 weights are read in place (one
  // F32 row by the gemv); elsewhere XNNPACK packs them, one row included.
  const std::string in_place = std::string("fp32: ") + kernels::F32GemmKernelName();
  const std::string fallback = kernels::HaveFastF32Gemm() ? in_place : "fp32: xnnpack";
  const std::string with_gemv =
      in_place + " (2+ rows), fp32: " + kernels::F32GemvKernelName() + " (1 row)";
  const std::string f32 = PathsOf(*m32);
  std::printf("fp32 model: kernels %s\n", f32.c_str());
  EXPECT_EQ(f32, kernels::HaveFastF32Gemm() && kernels::HaveFastF32Gemv() ? with_gemv : fallback);
  // F16 weights computed in F32 (fp16_compute off): no gemv, one row included.
  EXPECT_EQ(PathsOf(*m16, Fp16Compute::kOff), fallback);
  ASSERT_TRUE(InitXnnpack().ok());
  const std::string f16 = PathsOf(*m16, Fp16Compute::kAuto);
  std::printf("fp16 model: kernels %s\n", f16.c_str());
  EXPECT_EQ(f16, DetectFp16Arithmetic().available ? "fp16: xnnpack" : fallback);
}

}  // namespace
}  // namespace headwise
