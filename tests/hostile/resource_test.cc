// Resource failure: a translator whose declared limits need more memory than max_memory_bytes
// allows fails at creation, through the C++ and the C API alike, naming the bytes needed and
// the cap; nothing is created.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/test_model.h"
#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

TEST(ResourceLimit, MaxMemoryBytesFailsCreateThroughTheCApi) {
  const std::vector<uint8_t> image = testing::Serialize(testing::MakeSpec(testing::ModelOptions()));
  testing::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir / "model.hwm";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));

  hw_model* model = nullptr;
  ASSERT_EQ(hw_model_load(path.c_str(), nullptr, &model), HW_OK) << hw_last_error_message();
  hw_translator_params params = hw_translator_default_params();
  params.max_source_tokens = 32;
  params.max_target_tokens = 32;

  // What these limits need, from the C++ API on the same file.
  auto cpp_model = Model::Load(path);
  ASSERT_TRUE(cpp_model.ok()) << cpp_model.status().ToString();
  TranslatorLimits limits;
  limits.max_source_tokens = 32;
  limits.max_target_tokens = 32;
  auto sized = Translator::Create(*cpp_model, limits);
  ASSERT_TRUE(sized.ok()) << sized.status().ToString();
  const size_t needed = (*sized)->arena_bytes();

  params.max_memory_bytes = needed - 1;
  char sentinel = 0;  // a non-null output pointer, which a failure must reset to NULL
  hw_translator* translator = reinterpret_cast<hw_translator*>(&sentinel);
  EXPECT_EQ(hw_translator_create(model, &params, &translator), HW_ERR_LIMIT_EXCEEDED);
  EXPECT_EQ(translator, nullptr);
  const std::string message = hw_last_error_message();
  EXPECT_NE(message.find("need " + std::to_string(needed) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("max_memory_bytes is " + std::to_string(needed - 1)), std::string::npos)
      << message;
  EXPECT_STREQ(hw_status_name(HW_ERR_LIMIT_EXCEEDED), "LIMIT_EXCEEDED");

  params.max_memory_bytes = needed;
  ASSERT_EQ(hw_translator_create(model, &params, &translator), HW_OK) << hw_last_error_message();
  hw_translator_free(translator);
  hw_model_free(model);
}

}  // namespace
}  // namespace headwise
