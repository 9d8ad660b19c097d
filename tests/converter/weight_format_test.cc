// Weight formats (--weights fp32|fp16|int8): which tensors each format narrows, that the
// written file decodes back to the source values within the format's rounding bound, that the
// file shrinks, and the command-line flag. Parametrised over the format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "common/atomic_file.h"
#include "converter/src/cli.h"
#include "format/model_writer.h"
#include "format/weight_format.h"
#include "headwise_generated.h"
#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/model_readback.h"
#include "tests/converter/spec_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

namespace sc = ::headwise::schema;

bool IsMatrix(const TensorSpec& t) { return t.shape.size() == 2 && t.name != "final_logits_bias"; }

class WeightFormatTest : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(WeightFormatTest, RoundTripWithinTheFormatsBound) {
  const WeightFormat format = GetParam();
  ModelSpec spec = testing::MakeSpec({{0, 2}, {}, {1, 2, 3}, {3}});
  ApplyWeightFormat(format, &spec);
  testing::TempDir dir;
  const std::string path = dir / "m.hwm";
  ASSERT_TRUE(WriteModelFile(spec, path, AtomicWriteOptions()).ok());
  Result<testing::ReadBackModel> back = testing::ReadBack(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->tensors.size(), spec.tensors.size());
  size_t narrowed = 0;
  for (const TensorSpec& t : spec.tensors) {
    SCOPED_TRACE(t.name);
    const testing::ReadBackTensor& r = back->tensors.at(t.name);
    const sc::DType want = !IsMatrix(t) || format == WeightFormat::kF32 ? sc::DType::F32
                           : format == WeightFormat::kF16              ? sc::DType::F16
                                                                       : sc::DType::I8;
    EXPECT_EQ(r.dtype, static_cast<int>(want));
    narrowed += want != sc::DType::F32;
    ASSERT_EQ(r.values.size(), t.data.size());
    const size_t cols = t.shape.back();
    for (size_t i = 0; i < t.data.size(); ++i) {
      const float v = t.data[i];
      float bound = 0.0f;  // F32 is exact
      if (want == sc::DType::F16) bound = std::fabs(v) * 0x1p-11f + 0x1p-25f;
      if (want == sc::DType::I8) {
        float row_max = 0.0f;
        const size_t row = i / cols;
        for (size_t c = 0; c < cols; ++c) row_max = std::max(row_max, std::fabs(t.data[row * cols + c]));
        EXPECT_FLOAT_EQ(r.scales[row], row_max > 0 ? row_max / 127.0f : 1.0f);
        bound = 0.5f * r.scales[row] * 1.0001f;
      }
      ASSERT_LE(std::fabs(r.values[i] - v), bound) << "flat index " << i;
    }
  }
  if (format == WeightFormat::kF32) {
    EXPECT_EQ(narrowed, 0u);
  } else {
    EXPECT_GT(narrowed, 0u);
  }
}

TEST_P(WeightFormatTest, NarrowFormatsShrinkTheFile) {
  ModelSpec fp32 = testing::MakeSpec();
  ModelSpec narrow = fp32;
  ApplyWeightFormat(GetParam(), &narrow);
  auto a = SerializeModel(fp32);
  auto b = SerializeModel(narrow);
  ASSERT_TRUE(a.ok() && b.ok());
  if (GetParam() == WeightFormat::kF32) {
    EXPECT_EQ(a->size(), b->size());
  } else {
    EXPECT_LT(b->size(), a->size());
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, WeightFormatTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8),
                         [](const ::testing::TestParamInfo<WeightFormat>& param_info) {
                           return std::string(WeightFormatName(param_info.param));
                         });

TEST(WeightFormat, NamesRoundTripAndUnknownNamesFail) {
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8}) {
    WeightFormat parsed = WeightFormat::kF32;
    ASSERT_TRUE(ParseWeightFormat(WeightFormatName(f), &parsed));
    EXPECT_EQ(parsed, f);
  }
  WeightFormat parsed = WeightFormat::kF16;
  EXPECT_FALSE(ParseWeightFormat("int4", &parsed));
  EXPECT_FALSE(ParseWeightFormat("FP32", &parsed));
  EXPECT_EQ(parsed, WeightFormat::kF16);
}

TEST(WeightFormat, Int8QuantizationIsSymmetricPerRow) {
  const float m[] = {0.0f, 0.0f, 0.0f,  // all-zero row: scale 1, zeros
                     1.27f, -0.6351f, 0.01f,
                     -254.0f, 127.0f, 0.6f};
  std::vector<int8_t> q;
  const std::vector<float> s = QuantizeRowsI8(m, 3, 3, &q);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_FLOAT_EQ(s[1], 0.01f);
  EXPECT_FLOAT_EQ(s[2], 2.0f);
  const std::vector<int8_t> want = {0, 0, 0, 127, -64, 1, -127, 64, 0};  // 63.5 -> 64 (even)
  EXPECT_EQ(q, want);
}

TEST(WeightFormat, ValidationRejectsWhatTheDTypeCannotHold) {
  ModelSpec spec = testing::MakeSpec();
  ApplyWeightFormat(WeightFormat::kF16, &spec);
  for (TensorSpec& t : spec.tensors) {
    if (t.dtype == DType::kF16) {
      t.data[0] = 70000.0f;
      const Status s = ValidateModelSpec(spec);
      EXPECT_EQ(s.code(), ErrorCode::kInvalidCheckpoint);
      EXPECT_NE(s.message().find(t.name + ": F16 cannot hold"), std::string::npos) << s.message();
      break;
    }
  }
  ModelSpec bias = testing::MakeSpec();
  for (TensorSpec& t : bias.tensors) {
    if (t.shape.size() == 1) {
      t.dtype = DType::kI8;
      const Status s = ValidateModelSpec(bias);
      EXPECT_EQ(s.code(), ErrorCode::kInvalidCheckpoint);
      EXPECT_NE(s.message().find("needs a 2-D tensor"), std::string::npos) << s.message();
      break;
    }
  }
}

TEST(WeightFormat, CommandLineFlag) {
  testing::TempDir dir;
  const std::string ckpt = dir / "ckpt";
  testing::MakeCheckpoint().Write(ckpt);
  for (const char* name : {"fp32", "fp16", "int8"}) {
    SCOPED_TRACE(name);
    std::ostringstream out, err;
    const std::string path = dir / (std::string(name) + ".hwm");
    ASSERT_EQ(RunConvertCli({ckpt, "-o", path, "--weights", name}, out, err), kExitOk) << err.str();
    EXPECT_NE(out.str().find(std::string("weights ") + name), std::string::npos) << out.str();
    Result<testing::ReadBackModel> back = testing::ReadBack(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    const int want = std::string(name) == "fp32" ? 0 : std::string(name) == "fp16" ? 1 : 2;
    EXPECT_EQ(back->tensors.at("model.shared.weight").dtype, want);
    EXPECT_EQ(back->tensors.at("model.encoder.layers.0.fc1.bias").dtype, 0);
  }
  std::ostringstream out, err;
  EXPECT_EQ(RunConvertCli({ckpt, "-o", dir / "x.hwm", "--weights", "int4"}, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--weights: expected fp32, fp16 or int8, found 'int4'"), std::string::npos)
      << err.str();
}

}  // namespace
}  // namespace headwise::convert
