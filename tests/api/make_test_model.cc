// make_test_model DIR: writes the standard API test models (tiny.hwm, no_tokenizer.hwm) into DIR.
// Run by ctest as the setup of the fixture the C and CLI tests need.
#include <filesystem>
#include <iostream>
#include <system_error>

#include "tests/api/test_model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_test_model DIR\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(argv[1], ec);
  if (ec) {
    std::cerr << "make_test_model: cannot create " << argv[1] << ": " << ec.message() << "\n";
    return 1;
  }
  const headwise::Status s = headwise::testing::WriteStandardModels(argv[1]);
  if (!s.ok()) {
    std::cerr << "make_test_model: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}
