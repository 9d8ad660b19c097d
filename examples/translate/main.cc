// headwise-translate: translates command-line arguments or standard input with a .hwm model.
// Flags, output formats and exit codes: cli_options.cc (--help) and README.md.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <fstream>
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

// A line as read by std::getline, without a UTF-8 byte order mark on the first line of a file
// (`first`) and without the '\r' of a CRLF ending.
void TrimLine(bool first, std::string* line) {
  if (first && line->rfind("\xEF\xBB\xBF", 0) == 0) line->erase(0, 3);
  if (!line->empty() && line->back() == '\r') line->pop_back();
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
    TrimLine(next_++ == 0, line);
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

// Records, per line of a window, the model batch that translated it; `lines` are the window's
// lines that were translated (pointers into the window).
class BatchTimes final : public BatchObserver {
 public:
  BatchTimes(std::vector<LineResult*>& lines, size_t* next_batch)
      : lines_(lines), next_batch_(next_batch) {}
  void OnBatch(const BatchReport& batch) override {
    const size_t id = (*next_batch_)++;
    for (size_t j = 0; j < batch.num_lines; ++j) {
      LineResult& r = *lines_[batch.lines[j]];
      // With --split-sentences a line may have several sentences in one batch: listed once.
      if (r.batches.empty() || r.batches.back().number != id) {
        r.batches.push_back(LineResult::Batch{id, batch.milliseconds, batch.num_lines});
      }
    }
  }

 private:
  std::vector<LineResult*>& lines_;
  size_t* next_batch_;
};

// --prefix-file: line N of the file for input line N, read as the input is (no whole-file read).
class PrefixSource {
 public:
  explicit PrefixSource(const std::string& path) : path_(path), in_(path) {}
  bool open() const { return static_cast<bool>(in_); }
  // The prefix of input line `line` (the file's next line), or an error naming the file and
  // `line` in *error when the file has no more.
  void Next(size_t line, std::string* prefix, Status* error) {
    if (!std::getline(in_, *prefix)) {
      *error = Status(ErrorCode::kInvalidArgument,
                      "--prefix-file " + path_ + " has no line " + std::to_string(line));
      return;
    }
    TrimLine(line == 1, prefix);
  }
  // After the input ended: whether the file holds another line.
  bool HasMore() {
    std::string rest;
    return static_cast<bool>(std::getline(in_, rest));
  }

 private:
  std::string path_;
  std::ifstream in_;
};

// The library names the line ("texts[3]: ..."); the tool names it by its line number, so the
// prefix goes, and the limit is named by the tool's flag.
Status ForTheTool(const Status& s) {
  std::string m = s.message();
  if (m.rfind("texts[", 0) == 0) {
    if (const size_t colon = m.find("]: "); colon != std::string::npos) m.erase(0, colon + 3);
  } else if (m.rfind("target_prefixes[", 0) == 0) {
    if (const size_t colon = m.find("]: "); colon != std::string::npos) {
      m.replace(0, colon + 3, "prefix: ");
    }
  }
  if (s.code() == ErrorCode::kInputTooLong) {
    if (const size_t at = m.find("max_source_tokens"); at != std::string::npos) {
      m.replace(at, std::string("max_source_tokens").size(), "--max-input-len");
    }
  }
  return Status(s.code(), m);
}

// Translates one window of lines (each succeeding or failing on its own) and records the
// window's and each batch's time.
// Lines that failed before (a missing --prefix-file line) are left as they are.
void TranslateWindow(Translator& translator, const SearchOptions& search, BatchOptions batching,
                     size_t window, size_t* next_batch, std::vector<LineResult>& lines) {
  std::vector<LineResult*> run;
  std::vector<std::string> texts, prefixes;
  for (LineResult& r : lines) {
    r.window = window;
    r.window_lines = lines.size();
    if (!r.status.ok()) continue;
    run.push_back(&r);
    texts.push_back(r.input);
    if (r.has_prefix) prefixes.push_back(r.prefix);
  }
  BatchTimes times(run, next_batch);
  batching.observer = &times;
  const auto start = std::chrono::steady_clock::now();
  auto out = translator.TranslateEach(texts, search, batching, prefixes);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < run.size(); ++i) {
    LineResult& r = *run[i];
    r.window_ms = ms;
    if (!out.ok()) {
      r.status = out.status();
    } else if (!(*out)[i].ok()) {
      r.status = ForTheTool((*out)[i].status());
    } else {
      r.hypotheses = std::move((*out)[i]).value();
    }
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
  limits.sort_window = WindowLines(o);
  limits.max_beam = o.beam;
  limits.num_threads = o.threads;
  limits.max_source_tokens = o.max_input_len > 0 ? o.max_input_len : std::min(kDefaultTokens, positions);
  limits.max_target_tokens = o.max_len > 0 ? o.max_len : std::min(kDefaultTokens, positions);
  limits.fp16_compute = o.fp16 == "off"       ? Fp16Compute::kOff
                        : o.fp16 == "require" ? Fp16Compute::kRequire
                                              : Fp16Compute::kAuto;
  limits.use_shortlist = o.shortlist;
  limits.worker_wait = o.spin_workers ? WorkerWait::kSpin : WorkerWait::kYield;
  limits.batch_lanes = o.batch_lanes;
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
    PrintError("batch lanes " + std::to_string((*translator)->limits().batch_lanes));
  }

  SearchOptions search;
  search.beam_size = o.beam;
  search.num_hypotheses = o.nbest;
  search.length_penalty = o.length_penalty;
  search.max_length = 0;  // the translator's max_target_tokens
  search.beam_stop = o.beam_stop == "top-eos"     ? BeamStop::kTopEos
                     : o.beam_stop == "outscored" ? BeamStop::kOutscored
                                                  : BeamStop::kExhaustive;
  search.min_length = o.min_len;
  search.sample = o.sample;
  search.top_k = o.top_k;
  search.top_p = o.top_p;
  search.temperature = o.temperature;
  search.seed = o.seed;
  // The runtime's one check of the options (a call of no lines), before any input is read: a
  // setting the translator cannot serve (--min-len not below the maximum length) is a usage
  // error, not a failure of every line.
  if (const Status valid = (*translator)->TranslateIds(nullptr, 0, search); !valid.ok()) {
    PrintError(valid.ToString());
    return kExitUsage;
  }

  BatchOptions batching;
  batching.max_tokens = o.batch_tokens;
  batching.split_sentences = o.split_sentences;

  LineSource source(o.texts);
  std::unique_ptr<PrefixSource> prefix_file;
  if (!o.prefix_file.empty()) {
    prefix_file = std::make_unique<PrefixSource>(o.prefix_file);
    if (!prefix_file->open()) {
      PrintError("cannot read --prefix-file " + o.prefix_file);
      return kExitUsage;
    }
  }
  size_t line_no = 0;
  size_t windows = 0;
  size_t batches = 0;
  bool any_failed = false;
  std::vector<LineResult> window;
  std::string text;
  const auto window_lines = static_cast<size_t>(limits.sort_window);
  for (;;) {
    window.clear();
    while (window.size() < window_lines && source.Next(&text)) {
      LineResult r;
      r.line = ++line_no;
      r.input = text;
      r.split_sentences = o.split_sentences;
      r.has_prefix = o.has_prefix || prefix_file != nullptr;
      if (o.has_prefix) r.prefix = o.prefix;
      if (prefix_file != nullptr) prefix_file->Next(r.line, &r.prefix, &r.status);
      window.push_back(std::move(r));
    }
    if (window.empty()) break;
    TranslateWindow(**translator, search, batching, windows++, &batches, window);
    for (const LineResult& r : window) {
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
  if (prefix_file != nullptr && prefix_file->HasMore()) {
    PrintError("--prefix-file " + o.prefix_file + " has more lines than the input (" +
               std::to_string(line_no) + ")");
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
