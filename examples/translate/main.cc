// headwise-translate: translates command-line arguments or standard input with a .hwm model.
// Flags, output formats and exit codes: cli_options.cc (--help) and README.md.
#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_options.h"
#include "headwise/headwise.hpp"
#include "line_writer.h"

namespace headwise::cli {
namespace {

constexpr int kDefaultTokens = 256;

void PrintError(const std::string& message) {
  std::cerr << "headwise-translate: " << message << '\n';
}

// Yields the TEXT arguments, or the lines of stdin one at a time (never the whole stream).
class LineSource {
 public:
  explicit LineSource(const std::vector<std::string>& texts) : texts_(texts) {}

  bool Next(std::string* line) {
    if (!texts_.empty()) {
      if (next_ >= texts_.size()) return false;
      *line = texts_[next_++];
      return true;
    }
    if (!std::getline(std::cin, *line)) return false;
    if (next_++ == 0 && line->rfind("\xEF\xBB\xBF", 0) == 0) line->erase(0, 3);  // BOM
    if (!line->empty() && line->back() == '\r') line->pop_back();                 // CRLF
    return true;
  }

 private:
  const std::vector<std::string>& texts_;
  size_t next_ = 0;
};

// --verbose's shortlist line: "on (...)", "off (--no-shortlist; ...)" or "none in the model".
std::string ShortlistNote(const ModelInfo& info, const Translator& translator) {
  if (!info.has_shortlist) return "none in the model";
  const std::string what = std::to_string(info.shortlist_frequent) +
                           " frequent pieces, lists for " +
                           std::to_string(info.shortlist_sources) + " source pieces, longest " +
                           std::to_string(info.shortlist_longest);
  return translator.uses_shortlist() ? "on (" + what + ")"
                                     : "off (--no-shortlist; the model has " + what + ")";
}

// Lines that cannot be translated are found before the batch runs (encoding is cheap next to
// decoding), so one bad line costs only itself and is reported with its own line number.
void TranslateBatch(Translator& translator, const SearchOptions& search, int max_input_tokens,
                    std::vector<LineResult>& lines) {
  const Model& model = *translator.model();
  std::vector<size_t> valid;
  std::vector<std::string> texts;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto ids = model.EncodeSource(lines[i].input);
    if (!ids.ok()) {
      lines[i].status = ids.status();
    } else if (ids->size() > static_cast<size_t>(max_input_tokens)) {
      lines[i].status = Status(ErrorCode::kInputTooLong,
                               std::to_string(ids->size()) +
                                   " source tokens (EOS included) exceed --max-input-len " +
                                   std::to_string(max_input_tokens));
    } else {
      valid.push_back(i);
      texts.push_back(lines[i].input);
    }
  }
  if (texts.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  auto out = translator.Translate(texts, search);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (size_t j = 0; j < valid.size(); ++j) {
    LineResult& r = lines[valid[j]];
    if (!out.ok()) {
      r.status = out.status();
      continue;
    }
    r.hypotheses = std::move((*out)[j]);
    r.batch_ms = ms;
    r.batch_lines = texts.size();
  }
}

int Run(const CliOptions& o) {
  LoadOptions load;
  load.verify_checksum = o.verify;
  auto model = Model::Load(o.model_path, load);
  if (!model.ok()) {
    PrintError("cannot load " + o.model_path + ": " + model.status().ToString());
    return kExitModel;
  }
  // Fail before reading any input: a model without tokenizer cannot translate text.
  if (auto probe = (*model)->EncodeSource(""); !probe.ok()) {
    PrintError("cannot use " + o.model_path + ": " + probe.status().ToString());
    return kExitModel;
  }
  const int positions = (*model)->info().max_position_embeddings;
  TranslatorLimits limits;
  limits.max_batch = o.batch;
  limits.max_beam = o.beam;
  limits.num_threads = o.threads;
  limits.max_source_tokens = o.max_input_len > 0 ? o.max_input_len : std::min(kDefaultTokens, positions);
  limits.max_target_tokens = o.max_len > 0 ? o.max_len : std::min(kDefaultTokens, positions);
  limits.fp16_compute = o.fp16 == "off"       ? Fp16Compute::kOff
                        : o.fp16 == "require" ? Fp16Compute::kRequire
                                              : Fp16Compute::kAuto;
  limits.use_shortlist = o.shortlist;
  auto translator = Translator::Create(*model, limits);
  if (!translator.ok()) {
    const ErrorCode code = translator.status().code();
    PrintError("cannot create a translator: " + translator.status().ToString());
    // Limits the model cannot serve (e.g. --max-len over its positions) are the user's to fix.
    return code == ErrorCode::kInvalidArgument || code == ErrorCode::kLimitExceeded ? kExitUsage
                                                                                     : kExitModel;
  }

  if (o.verbose) {
    PrintError(std::string("precision ") + (*translator)->precision_note());
    PrintError(std::string("kernels ") + (*translator)->kernel_paths());
    PrintError("shortlist " + ShortlistNote((*model)->info(), **translator));
  }

  SearchOptions search;
  search.beam_size = o.beam;
  search.num_hypotheses = o.nbest;
  search.length_penalty = o.length_penalty;
  search.max_length = 0;  // the translator's max_target_tokens

  LineSource source(o.texts);
  size_t line_no = 0;
  bool any_failed = false;
  std::vector<LineResult> batch;
  std::string text;
  for (;;) {
    batch.clear();
    while (batch.size() < static_cast<size_t>(o.batch) && source.Next(&text)) {
      LineResult r;
      r.line = ++line_no;
      r.input = text;
      batch.push_back(std::move(r));
    }
    if (batch.empty()) break;
    TranslateBatch(**translator, search, limits.max_source_tokens, batch);
    for (const LineResult& r : batch) {
      if (!r.status.ok()) {
        any_failed = true;
        PrintError("line " + std::to_string(r.line) + ": " + r.status.ToString());
      }
      WriteLine(std::cout, r, o.json, o.nbest);
    }
    std::cout.flush();
  }
  if (std::cin.bad()) {
    PrintError("error reading standard input");
    any_failed = true;
  }
  return any_failed ? kExitLineFailed : kExitOk;
}

}  // namespace
}  // namespace headwise::cli

int main(int argc, char** argv) {
  using namespace headwise::cli;
  try {
    CliOptions options;
    std::string error;
    if (!ParseArgs(argc - 1, argv + 1, &options, &error)) {
      PrintError(error);
      std::cerr << "Try 'headwise-translate --help'.\n";
      return kExitUsage;
    }
    if (options.help) {
      std::cout << HelpText();
      return kExitOk;
    }
    if (options.version) {
      std::cout << "headwise-translate " << headwise::Version() << '\n';
      return kExitOk;
    }
    return Run(options);
  } catch (const std::exception& e) {
    // Only resource exhaustion gets here (the library reports errors as values).
    PrintError(std::string("fatal: ") + e.what());
    return kExitLineFailed;
  }
}
