// examples/translate/cli_options.h: the command line of headwise-translate and its exit codes.
#ifndef HEADWISE_EXAMPLES_TRANSLATE_CLI_OPTIONS_H_
#define HEADWISE_EXAMPLES_TRANSLATE_CLI_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace headwise::cli {

// Exit codes scripts can rely on.
enum ExitCode : int {
  kExitOk = 0,          // every line translated (empty lines included)
  kExitLineFailed = 1,  // at least one line failed; the others were translated
  kExitUsage = 2,       // bad flags, or options the model cannot serve
  kExitModel = 3,       // the model could not be loaded or no translator could be made from it
};

struct CliOptions {
  std::string model_path;
  int beam = 1;
  int nbest = 1;
  int max_len = 0;        // 0: min(256, model positions)
  int max_input_len = 0;  // 0: min(256, model positions)
  float length_penalty = 1.0f;
  std::string beam_stop = "exhaustive";  // --beam-stop exhaustive|top-eos|outscored (SearchOptions)
  int threads = 1;
  int batch = 8;          // --batch: most lines per batch (TranslatorLimits::max_batch)
  int batch_tokens = 0;   // --batch-tokens: token budget per batch, lines x longest source; 0 = none
  int window = 0;         // --window: lines read, sorted and batched together; 0 = WindowLines()
  bool json = false;
  bool verify = true;
  std::string fp16 = "auto";  // --fp16 auto|off|require (TranslatorLimits::fp16_compute)
  bool verbose = false;       // --verbose: the compute precision and why, on standard error
  bool shortlist = true;      // false: --no-shortlist (TranslatorLimits::use_shortlist)
  bool spin_workers = false;  // --spin-workers (TranslatorLimits::worker_wait = kSpin)
  int batch_lanes = 0;        // --batch-lanes N (TranslatorLimits::batch_lanes; 0 = automatic)
  bool split_sentences = false;  // --split-sentences (BatchOptions::split_sentences)
  // Target prefixes (Translator::TranslateEach's target_prefixes): --prefix TEXT for every
  // line, or --prefix-file FILE, line i for input line i; at most one of the two.
  bool has_prefix = false;
  std::string prefix;
  std::string prefix_file;
  int min_len = 0;             // --min-len N (SearchOptions::min_length)
  // --sample with --top-k, --top-p, --temperature, --seed (SearchOptions::sample and the
  // rest); those four without --sample are a usage error.
  bool sample = false;
  int top_k = 0;
  float top_p = 1.0f;
  float temperature = 1.0f;
  uint64_t seed = 0;
  std::string sampling_flag;   // the first of the four given, for that error
  bool help = false;
  bool version = false;
  std::vector<std::string> texts;  // empty: read stdin
};

// The lines read and sorted together: --window, else 16 x --batch, or 1 with --batch 1 (each line
// is then translated as soon as it is read).
int WindowLines(const CliOptions& options);

// Parses argv (without argv[0]). On a usage error returns false and sets *error to a message
// that names the flag and what was expected.
bool ParseArgs(int argc, const char* const* argv, CliOptions* options, std::string* error);

// The --help text.
const char* HelpText();

}  // namespace headwise::cli

#endif  // HEADWISE_EXAMPLES_TRANSLATE_CLI_OPTIONS_H_
