// converter/src/cli.h: the headwise-convert command line (main.cc only forwards to it, so the
// tests drive the real command in-process).
//
// Exit codes: 0 success; 1 invalid or unreadable input (checkpoint, model file), an existing
// output without --force, an output that would overwrite an input, or a failed write; 2 usage
// error (unknown option, missing or extra argument, a --keep-heads spec that is malformed or
// does not fit the checkpoint). Messages go to `err`, results to `out`.
#ifndef HEADWISE_CONVERTER_CLI_H_
#define HEADWISE_CONVERTER_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace headwise::convert {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalidInput = 1;
inline constexpr int kExitUsage = 2;

// `args` excludes the program name.
int RunConvertCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The --help text.
const char* ConvertUsage();

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_CLI_H_
