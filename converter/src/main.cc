// headwise-convert: see converter/src/cli.h and `headwise-convert --help`.
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "converter/src/cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  // headwise reports errors as Status values; only the standard library and nlohmann can
  // throw. Turn that into a message and exit status 1 rather than an abort.
  try {
    return headwise::convert::RunConvertCli(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "headwise-convert: out of memory; nothing was written\n";
  } catch (const std::exception& e) {
    std::cerr << "headwise-convert: internal error (" << e.what() << "); nothing was written\n";
  }
  return headwise::convert::kExitInvalidInput;
}
