#include "tests/runtime/test_model.h"

#include <gtest/gtest.h>

#include <utility>

#include "format/model_writer.h"

namespace headwise::testing {

std::vector<uint8_t> Serialize(const ModelSpec& spec) {
  auto bytes = SerializeModel(spec);
  if (!bytes.ok()) {
    ADD_FAILURE() << "SerializeModel: " << bytes.status().ToString();
    return {};
  }
  return std::move(bytes).value();
}

std::unique_ptr<TestModel> BuildModel(const ModelOptions& options) {
  auto loaded = LoadSpec(MakeSpec(options));
  if (!loaded.ok()) {
    ADD_FAILURE() << "building the model: " << loaded.status().ToString();
    auto empty = std::make_unique<TestModel>();
    empty->spec = MakeSpec(options);
    return empty;
  }
  return std::move(loaded).value();
}

}  // namespace headwise::testing
