// headwise-convert: see converter/src/cli.h and `headwise-convert --help`.
#include <iostream>
#include <string>
#include <vector>

#include "converter/src/cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return headwise::convert::RunConvertCli(args, std::cout, std::cerr);
}
