// Benchmarks on converted model files, by default the shipped ones (models/en-de/model.hwm,
// the pruned model, and models/en-de/base.hwm), translating the first lines of the committed
// test sentences (python/tests/data/en-de-test/test.en), batches cut in input order:
//
//   file/beam_vs_greedy/threads:1   every model at batch 1, greedy, then beam 4 under the
//       default stopping rule (SearchOptions::beam_stop), then beam 4 under each other rule over
//       the lines in each iteration; CPU time of this thread per generated token (the best
//       hypothesis's ids plus its EOS): <label>/greedy_ms_per_token, <label>/beam4_ms_per_token
//       and their ratio <label>/beam4_over_greedy (the default rule), and per rule
//       <label>/beam4_<rule>_over_greedy and <label>/beam4_<rule>_steps_per_token;
//       per-operation shares of the wall time (runtime/src/op_profile.h)
//       <label>/<search>_share_<kind> (greedy, beam4: the default rule), "other" being what no
//       timer covers (embeddings, bookkeeping, the calls between), and
//       <label>/<search>_share_encoder_all (the encoder in all, whose products and attention
//       are in the kinds too).
//   file/sampling/threads:1   every model at batch 1: greedy, then random sampling over the
//       whole distribution, with top_k 40 and with top_p 0.9: <label>/sample_<kind>_over_greedy
//       (CPU time per generated token) and <label>/sample_<kind>_share_search.
//   file/throughput/batch:B/beam:K  every model, 1 thread: <label>/tokens_per_s (CPU time) and
//       the shares as above.
//   file/threads/batch:B/beam:K/wait:yield|spin  (--long) every model on a 1-thread
//       Translator, a 2-thread one that splits each product over the pool (batch_lanes 1) and
//       a 2-thread one with batch lanes (the default; runtime/src/lanes.h) in turn, through
//       Translator::TranslateIds, wall time: <label>/speedup_2_threads (split products),
//       <label>/speedup_2_threads_lanes and <label>/batch_lanes (the lanes in use); the 2-thread
//       ones' workers yield (the default) or spin (WorkerWait), each wait its own benchmark.
//       Only meaningful on two otherwise idle cores.
//
// Models within one benchmark run in turn in every iteration, so a ratio between them (int8
// over fp32, beam over greedy) comes from one run. Environment:
//   HEADWISE_BENCH_MODELS="label=path,label=path"   other model files (e.g. an fp32 and an int8
//       conversion of models/en-de/base-checkpoint, to compare weight formats)
//   HEADWISE_BENCH_LINES=FILE, HEADWISE_BENCH_LINE_COUNT=N (default 64)
// A model that does not load is reported on stderr and left out; with none the file
// benchmarks are not registered.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "encoder.h"
#include "op_profile.h"
#include "search.h"
#include "translator_impl.h"

#ifndef HEADWISE_SOURCE_DIR
#define HEADWISE_SOURCE_DIR "."
#endif

namespace headwise::bench {
namespace {

constexpr int kMaxTokens = 256;  // as headwise-translate's default limits

struct FileModel {
  std::string label;
  std::shared_ptr<const Model> model;
  std::vector<std::vector<int32_t>> lines;  // the test lines, encoded
};

std::vector<FileModel>& Models() {
  static std::vector<FileModel> models;
  return models;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t next = s.find(sep, at);
    parts.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + 1;
  }
  return parts;
}

void LoadModels(size_t line_count) {
  const std::string src = HEADWISE_SOURCE_DIR;
  std::vector<std::pair<std::string, std::string>> wanted;
  if (const char* env = std::getenv("HEADWISE_BENCH_MODELS"); env != nullptr && *env != '\0') {
    for (const std::string& item : Split(env, ',')) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos) Die("HEADWISE_BENCH_MODELS: expected label=path, got " + item);
      wanted.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
  } else {
    wanted = {{"model", src + "/models/en-de/model.hwm"}, {"base", src + "/models/en-de/base.hwm"}};
  }
  const char* lines_env = std::getenv("HEADWISE_BENCH_LINES");
  const std::string lines_path = lines_env != nullptr && *lines_env != '\0'
                                     ? lines_env
                                     : src + "/python/tests/data/en-de-test/test.en";
  std::vector<std::string> texts;
  std::ifstream in(lines_path);
  for (std::string line; texts.size() < line_count && std::getline(in, line);) texts.push_back(line);
  if (texts.empty()) {
    std::fprintf(stderr, "file benchmarks: no lines in %s; not registered\n", lines_path.c_str());
    return;
  }
  for (const auto& [label, path] : wanted) {
    Result<std::shared_ptr<const Model>> model = Model::Load(path);
    if (!model.ok()) {
      std::fprintf(stderr, "file benchmarks: %s left out: %s\n", path.c_str(),
                   model.status().ToString().c_str());
      continue;
    }
    FileModel m{label, *model, {}};
    for (const std::string& text : texts) {
      Result<std::vector<int32_t>> ids = m.model->EncodeSource(text);
      if (!ids.ok()) Die(path + ": " + ids.status().ToString());
      if (ids->size() > static_cast<size_t>(kMaxTokens)) ids->resize(kMaxTokens);
      m.lines.push_back(std::move(ids).value());
    }
    Models().push_back(std::move(m));
  }
}

std::unique_ptr<Translator::Impl> MakeTranslator(const FileModel& m, int batch, int beam, int threads,
                                                 WorkerWait wait = WorkerWait::kYield) {
  TranslatorLimits l;
  l.worker_wait = wait;
  l.max_batch = batch;
  l.max_beam = beam;
  l.max_source_tokens = kMaxTokens;
  l.max_target_tokens = kMaxTokens;
  l.num_threads = threads;
  Result<std::unique_ptr<Translator::Impl>> t = CreateTranslatorImpl(m.model, l);
  if (!t.ok()) Die(m.label + ": " + t.status().ToString());
  return std::move(t).value();
}

struct Totals {
  double cpu = 0, wall = 0;
  size_t tokens = 0;
  OpProfile ops;

  void AddShares(benchmark::State& state, const std::string& prefix) const {
    double timed = 0;
    for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k) {
      state.counters[prefix + "share_" + kOpKindNames[k]] = ops.seconds[k] / wall;
      timed += ops.seconds[k];
    }
    state.counters[prefix + "share_other"] = 1.0 - timed / wall;
    // The encoder in all (its products and attention are in the kinds above too).
    state.counters[prefix + "share_encoder_all"] = ops.encoder_seconds / wall;
    state.counters[prefix + "steps_per_token"] = static_cast<double>(ops.steps) / static_cast<double>(tokens);
    state.counters[prefix + "rows_per_step"] = static_cast<double>(ops.step_rows) / static_cast<double>(ops.steps);
  }
};

// Translates every line of `m` in input-order batches of `batch` lines with `search` on `t`,
// adding times, generated tokens and the operation profile to `totals`.
void TranslateLines(const FileModel& m, Translator::Impl& t, size_t batch, SearchOptions search,
                    Totals* totals) {
  search.max_length = kMaxTokens;
  const int beam = search.beam_size;
  t.net.profile = &totals->ops;
  std::vector<TokenSpan> spans;
  const double cpu0 = ThreadCpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (size_t first = 0; first < m.lines.size(); first += batch) {
    const size_t n = std::min(batch, m.lines.size() - first);
    spans.clear();
    for (size_t i = 0; i < n; ++i) spans.push_back({m.lines[first + i].data(), m.lines[first + i].size()});
    if (!RunEncoder(t.net, t.buf.encoder, spans.data(), n).ok()) Die("encoder failed");
    t.buf.search.sources = spans.data();  // sampling keys its draws by them
    // A model that carries a vocabulary shortlist: the call's union, as TranslateIds makes it.
    if (t.shortlist.valid()) {
      t.shortlist.Prepare(spans.data(), nullptr, n, t.buf.search.logits,
                          n * static_cast<size_t>(beam));
    }
    const Status s = beam == 1 ? RunGreedy(t.decoder(), t.buf.search, n, search, kMaxTokens)
                               : RunBeam(t.decoder(), t.buf.search, n, search, kMaxTokens);
    if (!s.ok()) Die(s.ToString());
    for (size_t i = 0; i < n; ++i) {
      const HypothesisView h = t.buf.search.hyps.Get(i, 0);
      totals->tokens += h.size + (h.finished ? 1 : 0);
    }
  }
  totals->cpu += ThreadCpuSeconds() - cpu0;
  totals->wall += SecondsSince(wall0);
  t.net.profile = nullptr;
}

// Beam `beam` (1: greedy) under stopping rule `stop`.
void TranslateLines(const FileModel& m, Translator::Impl& t, size_t batch, int beam, Totals* totals,
                    BeamStop stop = SearchOptions{}.beam_stop) {
  SearchOptions search;
  search.beam_size = beam;
  search.beam_stop = stop;
  TranslateLines(m, t, batch, search, totals);
}

constexpr std::pair<BeamStop, const char*> kBeamStops[] = {
    {BeamStop::kExhaustive, "exhaustive"}, {BeamStop::kTopEos, "top-eos"}, {BeamStop::kOutscored, "outscored"}};

void BM_BeamVsGreedy(benchmark::State& state) {
  std::vector<std::unique_ptr<Translator::Impl>> translators;
  for (const FileModel& m : Models()) translators.push_back(MakeTranslator(m, 1, 4, 1));
  const BeamStop default_stop = SearchOptions{}.beam_stop;
  std::vector<Totals> greedy(Models().size()), beam(Models().size());
  std::vector<std::vector<Totals>> other(Models().size(), std::vector<Totals>(std::size(kBeamStops)));
  for (auto _ : state) {
    for (size_t i = 0; i < Models().size(); ++i) {
      TranslateLines(Models()[i], *translators[i], 1, 1, &greedy[i]);
      TranslateLines(Models()[i], *translators[i], 1, 4, &beam[i], default_stop);
      for (size_t r = 0; r < std::size(kBeamStops); ++r) {
        if (kBeamStops[r].first == default_stop) continue;
        TranslateLines(Models()[i], *translators[i], 1, 4, &other[i][r], kBeamStops[r].first);
      }
    }
  }
  for (size_t i = 0; i < Models().size(); ++i) {
    const std::string p = Models()[i].label + "/";
    const double g = greedy[i].cpu / static_cast<double>(greedy[i].tokens);
    const double b = beam[i].cpu / static_cast<double>(beam[i].tokens);
    state.counters[p + "greedy_ms_per_token"] = g * 1e3;
    state.counters[p + "beam4_ms_per_token"] = b * 1e3;
    state.counters[p + "beam4_over_greedy"] = b / g;
    greedy[i].AddShares(state, p + "greedy_");
    beam[i].AddShares(state, p + "beam4_");
    for (size_t r = 0; r < std::size(kBeamStops); ++r) {
      const Totals& t = kBeamStops[r].first == default_stop ? beam[i] : other[i][r];
      const std::string q = p + "beam4_" + kBeamStops[r].second + "_";
      state.counters[q + "over_greedy"] = t.cpu / static_cast<double>(t.tokens) / g;
      state.counters[q + "steps_per_token"] =
          static_cast<double>(t.ops.steps) / static_cast<double>(t.tokens);
    }
  }
  state.SetLabel(translators.empty() ? "" : translators[0]->kernel_paths);
}

// Sampling's cost against greedy at batch 1: every line drawn in id order (the whole
// distribution), with top_k 40, and with top_p 0.9 (which sorts every candidate).
// <label>/sample_<kind>_over_greedy: CPU time per generated token over greedy's;
// <label>/sample_<kind>_share_search: the share of the wall time in the search (the draw).
void BM_Sampling(benchmark::State& state) {
  std::vector<std::unique_ptr<Translator::Impl>> translators;
  for (const FileModel& m : Models()) translators.push_back(MakeTranslator(m, 1, 1, 1));
  struct Kind {
    const char* name;
    int top_k;
    float top_p;
  };
  constexpr Kind kKinds[] = {{"all", 0, 1.0f}, {"topk40", 40, 1.0f}, {"topp0.9", 0, 0.9f}};
  std::vector<Totals> greedy(Models().size());
  std::vector<std::vector<Totals>> sampled(Models().size(), std::vector<Totals>(std::size(kKinds)));
  for (auto _ : state) {
    for (size_t i = 0; i < Models().size(); ++i) {
      TranslateLines(Models()[i], *translators[i], 1, 1, &greedy[i]);
      for (size_t k = 0; k < std::size(kKinds); ++k) {
        SearchOptions search;
        search.sample = true;
        search.seed = 1;
        search.top_k = kKinds[k].top_k;
        search.top_p = kKinds[k].top_p;
        TranslateLines(Models()[i], *translators[i], 1, search, &sampled[i][k]);
      }
    }
  }
  for (size_t i = 0; i < Models().size(); ++i) {
    const std::string p = Models()[i].label + "/";
    const double g = greedy[i].cpu / static_cast<double>(greedy[i].tokens);
    state.counters[p + "greedy_ms_per_token"] = g * 1e3;
    state.counters[p + "greedy_share_search"] = greedy[i].ops.seconds[static_cast<size_t>(OpKind::kSearch)] / greedy[i].wall;
    for (size_t k = 0; k < std::size(kKinds); ++k) {
      const Totals& t = sampled[i][k];
      const std::string q = p + "sample_" + kKinds[k].name + "_";
      state.counters[q + "over_greedy"] = t.cpu / static_cast<double>(t.tokens) / g;
      state.counters[q + "share_search"] = t.ops.seconds[static_cast<size_t>(OpKind::kSearch)] / t.wall;
    }
  }
}

void BM_Throughput(benchmark::State& state, int batch, int beam) {
  std::vector<std::unique_ptr<Translator::Impl>> translators;
  for (const FileModel& m : Models()) translators.push_back(MakeTranslator(m, batch, beam, 1));
  std::vector<Totals> totals(Models().size());
  for (auto _ : state) {
    for (size_t i = 0; i < Models().size(); ++i) {
      TranslateLines(Models()[i], *translators[i], static_cast<size_t>(batch), beam, &totals[i]);
    }
  }
  for (size_t i = 0; i < Models().size(); ++i) {
    const std::string p = Models()[i].label + "/";
    state.counters[p + "tokens_per_s"] = static_cast<double>(totals[i].tokens) / totals[i].cpu;
    totals[i].AddShares(state, p);
  }
}

// A public Translator (Translator::TranslateIds, so batch lanes run where the limits have them).
std::unique_ptr<Translator> MakePublicTranslator(const FileModel& m, int batch, int beam, int threads,
                                                 WorkerWait wait, int batch_lanes) {
  TranslatorLimits l;
  l.worker_wait = wait;
  l.max_batch = batch;
  l.max_beam = beam;
  l.max_source_tokens = kMaxTokens;
  l.max_target_tokens = kMaxTokens;
  l.num_threads = threads;
  l.batch_lanes = batch_lanes;
  Result<std::unique_ptr<Translator>> t = Translator::Create(m.model, l);
  if (!t.ok()) Die(m.label + ": " + t.status().ToString());
  return std::move(t).value();
}

// As TranslateLines, through the public TranslateIds (wall time and tokens only).
void TranslateLinesPublic(const FileModel& m, Translator& t, size_t batch, int beam, Totals* totals) {
  SearchOptions search;
  search.beam_size = beam;
  search.max_length = kMaxTokens;
  std::vector<TokenSpan> spans;
  const auto wall0 = std::chrono::steady_clock::now();
  for (size_t first = 0; first < m.lines.size(); first += batch) {
    const size_t n = std::min(batch, m.lines.size() - first);
    spans.clear();
    for (size_t i = 0; i < n; ++i) spans.push_back({m.lines[first + i].data(), m.lines[first + i].size()});
    const Status s = t.TranslateIds(spans.data(), n, search);
    if (!s.ok()) Die(s.ToString());
    for (size_t i = 0; i < n; ++i) {
      const HypothesisView h = t.hypothesis(i, 0);
      totals->tokens += h.size + (h.finished ? 1 : 0);
    }
  }
  totals->wall += SecondsSince(wall0);
}

// 1 thread, then 2 threads splitting each product over the pool (batch_lanes 1), then 2
// threads with batch lanes (the default where the weights are read in place; lanes.h), in turn.
void BM_FileThreads(benchmark::State& state, int batch, int beam, WorkerWait wait) {
  std::vector<std::unique_ptr<Translator>> one, split, lanes;
  for (const FileModel& m : Models()) {
    one.push_back(MakePublicTranslator(m, batch, beam, 1, WorkerWait::kYield, 1));
    split.push_back(MakePublicTranslator(m, batch, beam, 2, wait, 1));
    lanes.push_back(MakePublicTranslator(m, batch, beam, 2, wait, 0));
  }
  const size_t n = Models().size();
  std::vector<Totals> t1(n), t2(n), t3(n);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) {
      TranslateLinesPublic(Models()[i], *one[i], static_cast<size_t>(batch), beam, &t1[i]);
      TranslateLinesPublic(Models()[i], *split[i], static_cast<size_t>(batch), beam, &t2[i]);
      TranslateLinesPublic(Models()[i], *lanes[i], static_cast<size_t>(batch), beam, &t3[i]);
    }
  }
  const double iterations = static_cast<double>(state.iterations());
  for (size_t i = 0; i < n; ++i) {
    const std::string p = Models()[i].label + "/";
    if (t1[i].tokens != t2[i].tokens || t1[i].tokens != t3[i].tokens) {
      Die(p + ": the translators generated different numbers of tokens");
    }
    state.counters[p + "ms_1_thread"] = t1[i].wall / iterations * 1e3;
    state.counters[p + "ms_2_threads"] = t2[i].wall / iterations * 1e3;
    state.counters[p + "ms_2_threads_lanes"] = t3[i].wall / iterations * 1e3;
    state.counters[p + "speedup_2_threads"] = t1[i].wall / t2[i].wall;
    state.counters[p + "speedup_2_threads_lanes"] = t1[i].wall / t3[i].wall;
    state.counters[p + "batch_lanes"] = lanes[i]->limits().batch_lanes;
  }
}

}  // namespace

void RegisterFileModelBenchmarks(const BenchConfig& config) {
  size_t line_count = config.smoke ? 2 : 64;
  if (const char* env = std::getenv("HEADWISE_BENCH_LINE_COUNT"); env != nullptr && *env != '\0') {
    line_count = static_cast<size_t>(std::strtoul(env, nullptr, 10));
  }
  LoadModels(line_count);
  if (Models().empty()) return;
  const int iterations = config.smoke ? 1 : 3;
  auto* b = benchmark::RegisterBenchmark("file/beam_vs_greedy/threads:1", BM_BeamVsGreedy);
  b->Unit(benchmark::kMillisecond)->Iterations(iterations);
  if (config.smoke) return;
  benchmark::RegisterBenchmark("file/sampling/threads:1", BM_Sampling)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(iterations);
  for (const auto& [batch, beam] : {std::pair<int, int>{32, 1}, {32, 4}}) {
    const std::string shape = "/batch:" + std::to_string(batch) + "/beam:" + std::to_string(beam);
    benchmark::RegisterBenchmark(("file/throughput" + shape).c_str(), BM_Throughput, batch, beam)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(iterations);
  }
  // Two threads on a loaded machine can take minutes per call: long set only.
  if (!config.long_set) return;
  for (const auto& [batch, beam] :
       {std::pair<int, int>{1, 1}, {1, 4}, {8, 1}, {8, 4}, {32, 1}, {32, 4}}) {
    for (WorkerWait wait : {WorkerWait::kYield, WorkerWait::kSpin}) {
      const std::string shape = "/batch:" + std::to_string(batch) + "/beam:" + std::to_string(beam) +
                                (wait == WorkerWait::kSpin ? "/wait:spin" : "/wait:yield");
      benchmark::RegisterBenchmark(("file/threads" + shape).c_str(), BM_FileThreads, batch, beam, wait)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(iterations);
    }
  }
}

}  // namespace headwise::bench
