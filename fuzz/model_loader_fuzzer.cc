// Fuzz target: Model::LoadFromMemory on arbitrary bytes (copied into a 64-aligned buffer of
// exactly the input's size, so AddressSanitizer sees any read past the end), checksum off so
// that mutations reach the checks behind it. A model that loads is then used (ExerciseModel):
// it must translate or fail cleanly, with every produced id inside its vocabulary.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

#include "fuzz/fuzz_check.h"
#include "fuzz/model_exercise.h"
#include "headwise/headwise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using headwise::ErrorCode;
  void* buffer = nullptr;
  if (posix_memalign(&buffer, 64, size == 0 ? 64 : size) != 0) return 0;
  if (size > 0) std::memcpy(buffer, data, size);
  {
    headwise::LoadOptions options;
    options.verify_checksum = false;
    auto model = headwise::Model::LoadFromMemory(buffer, size, options);
    if (model.ok()) {
      const headwise::Status used = headwise::fuzz::ExerciseModel(*model);
      FUZZ_CHECK(used.code() != ErrorCode::kInternal, "%s", used.ToString().c_str());
    } else {
      static const std::set<ErrorCode> kLoadErrors = {
          ErrorCode::kInvalidModel, ErrorCode::kUnsupportedVersion, ErrorCode::kTokenizer};
      FUZZ_CHECK(kLoadErrors.count(model.status().code()) == 1, "%s",
                 model.status().ToString().c_str());
      FUZZ_CHECK(!model.status().message().empty(), "empty message");
    }
  }
  std::free(buffer);
  return 0;
}
