#include "converter/src/safetensors_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

namespace headwise::convert {
namespace {

std::string Le64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A file image from a header text and raw data bytes.
std::string Image(const std::string& header, const std::string& data) {
  return Le64(header.size()) + header + data;
}

Result<SafetensorsContents> Parse(const std::string& image) {
  return ParseSafetensors(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "m.st");
}

std::string U16(std::initializer_list<uint16_t> values) {
  std::string s;
  for (uint16_t v : values) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>(v >> 8);
  }
  return s;
}

TEST(Safetensors, ReadsF32F16Bf16ExactlyAndMetadata) {
  std::string f32;
  for (float v : {1.5f, -0.25f, 3.0e-38f}) {
    char b[4];
    std::memcpy(b, &v, 4);
    f32.append(b, 4);
  }
  // F16: 1.0, -2.0, smallest subnormal 2^-24, largest normal 65504, -0.
  const std::string f16 = U16({0x3c00, 0xc000, 0x0001, 0x7bff, 0x8000});
  // BF16: 1.0, -5.0, 2^-133 (subnormal float), 3.0e38 region (0x7f61).
  const std::string bf16 = U16({0x3f80, 0xc0a0, 0x0001, 0x7f61});
  const std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
      R"("b":{"dtype":"F16","shape":[5],"data_offsets":[12,22]},)"
      R"("c":{"dtype":"BF16","shape":[2,2],"data_offsets":[22,30]}})";
  const std::string image = Image(header, f32 + f16 + bf16);  // the tensors point into it
  auto r = Parse(image);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tensors.size(), 3u);
  EXPECT_EQ(r->metadata.at("format"), "pt");

  const SafetensorsTensor* a = r->Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, SafetensorsDType::kF32);
  EXPECT_EQ(SafetensorsToFloat(*a), (std::vector<float>{1.5f, -0.25f, 3.0e-38f}));

  const SafetensorsTensor* b = r->Find("b");
  ASSERT_NE(b, nullptr);
  const std::vector<float> bv = SafetensorsToFloat(*b);
  EXPECT_EQ(bv[0], 1.0f);
  EXPECT_EQ(bv[1], -2.0f);
  EXPECT_EQ(bv[2], std::ldexp(1.0f, -24));
  EXPECT_EQ(bv[3], 65504.0f);
  EXPECT_EQ(bv[4], 0.0f);
  EXPECT_TRUE(std::signbit(bv[4]));

  const SafetensorsTensor* c = r->Find("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->shape, (std::vector<uint64_t>{2, 2}));
  const std::vector<float> cv = SafetensorsToFloat(*c);
  EXPECT_EQ(cv[0], 1.0f);
  EXPECT_EQ(cv[1], -5.0f);
  EXPECT_EQ(cv[2], std::ldexp(1.0f, -133));
  uint32_t bits = 0x7f610000u;
  float big;
  std::memcpy(&big, &bits, 4);
  EXPECT_EQ(cv[3], big);

  EXPECT_EQ(r->Find("missing"), nullptr);
}

TEST(Safetensors, AllowsGapsEmptyTensorsAndScalars) {
  const std::string header =
      R"({"s":{"dtype":"F32","shape":[],"data_offsets":[8,12]},)"
      R"("e":{"dtype":"F16","shape":[0,4],"data_offsets":[4,4]}})";
  auto r = Parse(Image(header, std::string(12, '\0')));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Find("s")->num_elements, 1u);
  EXPECT_EQ(r->Find("e")->num_elements, 0u);
  EXPECT_TRUE(SafetensorsToFloat(*r->Find("e")).empty());
}

struct BadFile {
  const char* name;
  std::string image;
  const char* message;
};

class SafetensorsRejects : public ::testing::TestWithParam<BadFile> {};

TEST_P(SafetensorsRejects, WithAMessageNamingTheProblem) {
  auto r = Parse(GetParam().image);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidCheckpoint);
  EXPECT_NE(r.status().message().find(GetParam().message), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().rfind("m.st", 0), 0u) << "message must start with the file";
}

const std::string kOk = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

INSTANTIATE_TEST_SUITE_P(
    AllPaths, SafetensorsRejects,
    ::testing::Values(
        BadFile{"Empty", "", "truncated file: 0 bytes"},
        BadFile{"ShortLength", std::string("\x10\x00\x00", 3), "truncated file: 3 bytes"},
        BadFile{"HeaderBeyondFile", Le64(1000) + "{}", "header length 1000 goes beyond the file"},
        BadFile{"HugeLength", Le64(~0ull) + "{}", "goes beyond the file"},
        BadFile{"InvalidJson", Image("{\"a\":", ""), "invalid JSON (nlohmann:"},
        BadFile{"NotUtf8Json", Image("{\"\xff\":1}", ""), "invalid JSON"},
        BadFile{"NotAnObject", Image("[1,2]", ""), "expected a JSON object, found an array"},
        BadFile{"EntryNotObject", Image(R"({"a":5})", ""), "tensor 'a': expected an object"},
        BadFile{"MissingField", Image(R"({"a":{"dtype":"F32","shape":[1]}})", std::string(4, '\0')),
                "tensor 'a': missing field 'data_offsets'"},
        BadFile{"UnsupportedDType",
                Image(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0')),
                "tensor 'a': unsupported dtype 'F64'; expected F32, F16 or BF16"},
        BadFile{"DTypeNotString",
                Image(R"({"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0')),
                "dtype: expected a string, found an integer"},
        BadFile{"NegativeDim",
                Image(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::string(4, '\0')),
                "shape: expected non-negative integers, found -1"},
        BadFile{"FloatDim",
                Image(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", std::string(4, '\0')),
                "shape: expected non-negative integers, found 1.5"},
        BadFile{"OffsetsNotPair",
                Image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", std::string(4, '\0')),
                "data_offsets: expected [begin, end]"},
        BadFile{"OffsetsReversed",
                Image(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", std::string(4, '\0')),
                "data_offsets: end 0 before begin 4"},
        BadFile{"SizeMismatch",
                Image(R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
                "tensor 'a': 8 bytes in data_offsets, but shape and dtype F16 need 6"},
        BadFile{"ShapeOverflow",
                Image(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                      std::string(8, '\0')),
                "need more than 2^64"},
        BadFile{"OutOfRange", Image("{" + kOk + "}", std::string(7, '\0')),
                "tensor 'a': data_offsets [0, 8) beyond the data region of 7 bytes"},
        BadFile{"Overlap",
                Image("{" + kOk + R"(,"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                      std::string(8, '\0')),
                "tensors 'a' [0, 8) and 'b' [4, 8) overlap"},
        BadFile{"DuplicateName", Image("{" + kOk + "," + kOk + "}", std::string(8, '\0')),
                "duplicate key 'a'"},
        BadFile{"MetadataNotStrings", Image(R"({"__metadata__":{"n":1}})", ""),
                "__metadata__.n: expected a string, found an integer"}),
    [](const ::testing::TestParamInfo<BadFile>& param) { return param.param.name; });

}  // namespace
}  // namespace headwise::convert
