// headwise_throughput: translates a file of lines with one configuration and prints one JSON
// object with the time and target tokens per second (bench/throughput.py runs the matrix).
//
//   headwise_throughput -m MODEL.hwm -i LINES.txt [--batch N] [--batch-tokens N] [--beam K]
//       [--threads T] [--repeat R] [--no-sort] [--profile] [--max-len N] [--label TEXT]
//       [--output FILE]
//
// One run = tokenize every line (Model::EncodeSource), translate them all with
// Translator::TranslateIdsEach (the whole file is one sort window, so the lines are sorted by
// length and cut into batches of --batch lines / --batch-tokens tokens), decode each line's
// best hypothesis (Model::DecodeTarget). Target tokens = the ids of each line's best
// hypothesis, EOS excluded (what CTranslate2 returns as tokens). The limits are
// headwise-translate's defaults (256 source and target tokens) with max_batch = --batch and
// max_beam = --beam. A warm-up translation of the first batch comes before the timed runs.
// Reported: every run's tokenize / translate / detokenize seconds (wall) and process CPU
// seconds, and tokens per second over the median run (end to end, the model's part alone, and
// per CPU second). With --profile (one thread only: the shares are of the calling thread's
// wall time) a last run has the runtime's operation timers on (runtime/src/op_profile.h) and
// its time is split by operation. --output
// writes each line's best translation (an empty line for a failed one).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headwise/headwise.hpp"
#include "op_profile.h"
#include "translator_impl.h"

namespace headwise::bench {
namespace {

struct Args {
  std::string model, input, label, output;
  int batch = 32, batch_tokens = 0, beam = 1, threads = 1, repeat = 1, max_len = 256;
  bool sort = true, profile = false;
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "headwise_throughput: " << why
            << "\nusage: headwise_throughput -m MODEL.hwm -i LINES.txt [--batch N] "
               "[--batch-tokens N] [--beam K] [--threads T] [--repeat R] [--no-sort] "
               "[--profile] [--max-len N] [--label TEXT] [--output FILE]\n";
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(f + ": missing value");
      return argv[++i];
    };
    auto number = [&](int lo) {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < lo || n > 1 << 20) Usage(f + ": bad value '" + v + "'");
      return static_cast<int>(n);
    };
    if (f == "-m") a.model = value();
    else if (f == "-i") a.input = value();
    else if (f == "--label") a.label = value();
    else if (f == "--output") a.output = value();
    else if (f == "--batch") a.batch = number(1);
    else if (f == "--batch-tokens") a.batch_tokens = number(0);
    else if (f == "--beam") a.beam = number(1);
    else if (f == "--threads") a.threads = number(1);
    else if (f == "--repeat") a.repeat = number(1);
    else if (f == "--max-len") a.max_len = number(1);
    else if (f == "--no-sort") a.sort = false;
    else if (f == "--profile") a.profile = true;
    else Usage("unknown option '" + f + "'");
  }
  if (a.model.empty() || a.input.empty()) Usage("-m and -i are required");
  if (a.profile && a.threads != 1) Usage("--profile measures one thread only");
  return a;
}

// CPU time of the whole process (every thread of the pool): on a machine shared with other
// jobs it leaves out the time they hold the cores, which wall time does not.
double ProcessCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::cerr << "headwise_throughput: " << what << ": " << s.ToString() << "\n";
  std::exit(1);
}

struct Run {
  double tokenize_s = 0, translate_s = 0, detokenize_s = 0;
  double cpu_s = 0;  // process CPU seconds over the three
  size_t target_tokens = 0, source_tokens = 0, batches = 0, failed = 0;
  std::vector<std::string> texts;
  double total() const { return tokenize_s + translate_s + detokenize_s; }
};

class CountBatches final : public BatchObserver {
 public:
  void OnBatch(const BatchReport&) override { ++batches; }
  size_t batches = 0;
};

Run TranslateFile(const Model& model, Translator& tr, const std::vector<std::string>& lines,
                  const SearchOptions& search, BatchOptions batching) {
  Run r;
  const double cpu0 = ProcessCpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<int32_t>> ids;
  ids.reserve(lines.size());
  for (const std::string& line : lines) {
    auto e = model.EncodeSource(line);
    if (!e.ok()) Die("encoding", e.status());
    ids.push_back(std::move(e).value());
    r.source_tokens += ids.back().size();
  }
  r.tokenize_s = Since(t0);

  CountBatches counter;
  batching.observer = &counter;
  const auto window = static_cast<size_t>(tr.limits().sort_window);
  std::vector<TokenSpan> spans;
  std::vector<std::vector<int32_t>> best(lines.size());
  t0 = std::chrono::steady_clock::now();
  for (size_t first = 0; first < ids.size(); first += window) {
    const size_t n = std::min(window, ids.size() - first);
    spans.clear();
    for (size_t i = 0; i < n; ++i) spans.push_back({ids[first + i].data(), ids[first + i].size()});
    const Status s = tr.TranslateIdsEach(spans.data(), n, search, batching);
    if (!s.ok()) Die("translating", s);
    for (size_t i = 0; i < n; ++i) {  // the copies leave the window for the next one
      if (tr.line_code(i) != ErrorCode::kOk || tr.num_hypotheses(i) == 0) {
        ++r.failed;
        continue;
      }
      const HypothesisView h = tr.hypothesis(i, 0);
      best[first + i].assign(h.ids, h.ids + h.size);
    }
  }
  r.translate_s = Since(t0);
  r.batches = counter.batches;

  t0 = std::chrono::steady_clock::now();
  r.texts.reserve(best.size());
  for (const auto& b : best) {
    r.target_tokens += b.size();
    auto text = model.DecodeTarget(b.data(), b.size());
    if (!text.ok()) Die("decoding", text.status());
    r.texts.push_back(std::move(text).value());
  }
  r.detokenize_s = Since(t0);
  r.cpu_s = ProcessCpuSeconds() - cpu0;
  return r;
}

int Main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  std::vector<std::string> lines;
  {
    std::ifstream in(a.input, std::ios::binary);
    if (!in) Usage("cannot read " + a.input);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  if (lines.empty()) Usage(a.input + " has no lines");
  LoadOptions load;
  load.verify_checksum = false;
  auto model = Model::Load(a.model, load);
  if (!model.ok()) Die("loading " + a.model, model.status());
  TranslatorLimits limits;
  limits.max_batch = a.batch;
  limits.max_beam = a.beam;
  limits.num_threads = a.threads;
  const int positions = (*model)->info().max_position_embeddings;
  limits.max_source_tokens = std::min(256, positions);
  limits.max_target_tokens = std::min(a.max_len, positions);
  limits.sort_window = static_cast<int>(std::min<size_t>(lines.size(), 4096));
  auto tr = Translator::Create(*model, limits);
  if (!tr.ok()) Die("creating the translator", tr.status());
  SearchOptions search;
  search.beam_size = a.beam;
  BatchOptions batching;
  batching.max_tokens = a.batch_tokens;
  batching.sort_by_length = a.sort;

  {  // warm-up: the first batch's lines
    const std::vector<std::string> first(lines.begin(),
                                         lines.begin() + std::min<size_t>(lines.size(), a.batch));
    TranslateFile(**model, **tr, first, search, batching);
  }
  std::vector<Run> runs;
  for (int i = 0; i < a.repeat; ++i) runs.push_back(TranslateFile(**model, **tr, lines, search, batching));
  std::vector<Run> sorted = runs;
  std::sort(sorted.begin(), sorted.end(), [](const Run& x, const Run& y) { return x.total() < y.total(); });
  const Run& median = sorted[sorted.size() / 2];

  nlohmann::ordered_json j;
  if (!a.label.empty()) j["label"] = a.label;
  j["engine"] = "headwise";
  j["model"] = a.model;
  j["weight_format"] = (*model)->info().weight_format;
  j["input"] = a.input;
  j["lines"] = lines.size();
  j["batch"] = a.batch;
  j["batch_tokens"] = a.batch_tokens;
  j["sorted"] = a.sort;
  j["beam"] = a.beam;
  j["threads"] = a.threads;
  j["sort_window"] = (*tr)->limits().sort_window;
  j["precision"] = MatmulPrecisionName((*tr)->matmul_precision());
  j["kernel_paths"] = (*tr)->kernel_paths();
  j["source_tokens"] = median.source_tokens;
  j["target_tokens"] = median.target_tokens;
  j["failed_lines"] = median.failed;
  j["batches"] = median.batches;
  j["runs"] = nlohmann::ordered_json::array();
  for (const Run& r : runs) {
    j["runs"].push_back({{"tokenize_s", r.tokenize_s},
                         {"translate_s", r.translate_s},
                         {"detokenize_s", r.detokenize_s},
                         {"total_s", r.total()},
                         {"cpu_s", r.cpu_s}});
  }
  j["tokens_per_s"] = static_cast<double>(median.target_tokens) / median.total();
  j["model_tokens_per_s"] = static_cast<double>(median.target_tokens) / median.translate_s;
  // Per CPU second of the process: steadier than wall time on a shared machine; with 2
  // threads it counts both, so thread scaling is read from tokens_per_s (wall).
  j["cpu_tokens_per_s"] = static_cast<double>(median.target_tokens) / median.cpu_s;

  if (a.profile) {
    OpProfile ops;
    TranslatorAccess::Of(**tr).net.profile = &ops;
    const Run p = TranslateFile(**model, **tr, lines, search, batching);
    TranslatorAccess::Of(**tr).net.profile = nullptr;
    auto kind = [&](OpKind k) { return ops.seconds[static_cast<int>(k)]; };
    const double total = p.total();
    const double tokenization = p.tokenize_s + p.detokenize_s;
    double known = 0;
    for (double s : ops.seconds) known += s;
    // "other": the rest of the translation (embeddings, beam cache copies, batching, result
    // copies); cache copies are also reported on their own in "seconds".
    const double other = std::max(0.0, p.translate_s - known) + kind(OpKind::kCacheCopy);
    nlohmann::ordered_json shares;
    shares["projections"] = kind(OpKind::kProjection) / total;
    shares["attention"] = kind(OpKind::kAttention) / total;
    shares["feed_forward"] = kind(OpKind::kFeedForward) / total;
    shares["output_layer"] = kind(OpKind::kOutputLayer) / total;
    shares["search"] = kind(OpKind::kSearch) / total;
    shares["tokenization"] = tokenization / total;
    shares["other"] = other / total;
    nlohmann::ordered_json prof;
    prof["shares"] = shares;
    prof["seconds"] = {{"projections", kind(OpKind::kProjection)},
                       {"attention", kind(OpKind::kAttention)},
                       {"feed_forward", kind(OpKind::kFeedForward)},
                       {"output_layer", kind(OpKind::kOutputLayer)},
                       {"search", kind(OpKind::kSearch)},
                       {"cache_copy", kind(OpKind::kCacheCopy)},
                       {"tokenization", tokenization},
                       {"other", other},
                       {"encoder_all", ops.encoder_seconds}};
    prof["profiled_total_s"] = total;
    prof["decoder_steps"] = ops.steps;
    j["profile"] = prof;
  }
  if (!a.output.empty()) {
    std::ofstream out(a.output, std::ios::binary);
    for (std::string t : runs.back().texts) {
      std::replace(t.begin(), t.end(), '\n', ' ');  // one line per input line
      out << t << '\n';
    }
    if (!out) Usage("cannot write " + a.output);
  }
  std::cout << j.dump() << "\n";
  return 0;
}

}  // namespace
}  // namespace headwise::bench

int main(int argc, char** argv) { return headwise::bench::Main(argc, argv); }
