// The vocabulary shortlist on a real model: decode time with the shortlist on against off on
// real sentences. Registered only when HEADWISE_BENCH_SHORTLIST_MODEL names a .hwm converted
// with `headwise-convert --shortlist` and HEADWISE_BENCH_SHORTLIST_TEXT a file of source lines
// (e.g. a corpus split's source side); HEADWISE_BENCH_SHORTLIST_LINES (default 100) of them are
// used. bench/README.md gives the commands for the shipped model.
//
// model/shortlist_real/beam:B: per iteration every line is translated alone (batch 1, 1
// thread) by a translator with the shortlist off and one with it on, alternating line by line
// (a change in machine load hits both alike). Per line and translator: decode time = thread CPU
// time of the translation minus that of the same line with max_length 1 (encoder, first step
// and the call's set-up cancel), summed over the lines. Counters: decode_us_per_token_off /
// _on (over the best hypotheses' tokens), step_speedup (decode time off / on), union_mean
// (pieces the shortlist allows per line), vocab, identical (lines whose best hypothesis is the
// same).
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "headwise/headwise.hpp"

namespace headwise::bench {
namespace {

struct RealSetup {
  std::shared_ptr<const Model> model;
  std::vector<std::vector<int32_t>> sources;  // encoder inputs, EOS included
};

const RealSetup& Setup(const std::string& model_path, const std::string& text_path, size_t lines) {
  static RealSetup setup;
  if (setup.model != nullptr) return setup;
  Result<std::shared_ptr<const Model>> model = Model::Load(model_path);
  if (!model.ok()) Die(model.status().ToString());
  setup.model = *model;
  if (!setup.model->info().has_shortlist) Die(model_path + " has no vocabulary shortlist");
  std::ifstream in(text_path);
  if (!in) Die("cannot read " + text_path);
  std::string line;
  while (setup.sources.size() < lines && std::getline(in, line)) {
    Result<std::vector<int32_t>> ids = setup.model->EncodeSource(line);
    if (!ids.ok()) Die(text_path + ": " + ids.status().ToString());
    if (ids->size() > 1 && ids->size() <= 256) setup.sources.push_back(std::move(ids).value());
  }
  if (setup.sources.empty()) Die(text_path + ": no lines");
  return setup;
}

void BM_ShortlistReal(benchmark::State& state, std::string model_path, std::string text_path,
                      size_t lines, int beam) {
  const RealSetup& s = Setup(model_path, text_path, lines);
  std::unique_ptr<Translator> tr[2];  // off, on
  for (int i = 0; i < 2; ++i) {
    TranslatorLimits l;
    l.max_batch = 1;
    l.max_beam = beam;
    l.num_threads = 1;
    l.use_shortlist = i == 1;
    Result<std::unique_ptr<Translator>> t = Translator::Create(s.model, l);
    if (!t.ok()) Die(t.status().ToString());
    tr[i] = std::move(t).value();
  }
  if (!tr[1]->uses_shortlist() || tr[0]->uses_shortlist()) Die("the shortlist switch does not work");
  SearchOptions full, one;
  full.beam_size = one.beam_size = beam;
  one.max_length = 1;
  double decode[2] = {0, 0};
  double tokens[2] = {0, 0};
  double identical = 0, union_total = 0;
  for (auto _ : state) {
    for (const std::vector<int32_t>& src : s.sources) {
      const TokenSpan span{src.data(), src.size()};
      std::vector<int32_t> best[2];
      for (int i = 0; i < 2; ++i) {
        double t0 = ThreadCpuSeconds();
        if (!tr[i]->TranslateIds(&span, 1, full).ok()) Die("TranslateIds failed");
        const double t_full = ThreadCpuSeconds() - t0;
        const HypothesisView h = tr[i]->hypothesis(0, 0);
        best[i].assign(h.ids, h.ids + h.size);
        t0 = ThreadCpuSeconds();
        if (!tr[i]->TranslateIds(&span, 1, one).ok()) Die("TranslateIds failed");
        decode[i] += t_full - (ThreadCpuSeconds() - t0);
        tokens[i] += static_cast<double>(h.size);
      }
      identical += best[0] == best[1] ? 1 : 0;
    }
  }
  for (const std::vector<int32_t>& src : s.sources) {
    Result<std::vector<int32_t>> pieces = s.model->ShortlistPieces({src});
    if (pieces.ok()) union_total += static_cast<double>(pieces->size());
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["lines"] = static_cast<double>(s.sources.size());
  state.counters["decode_us_per_token_off"] = decode[0] / tokens[0] * 1e6;
  state.counters["decode_us_per_token_on"] = decode[1] / tokens[1] * 1e6;
  state.counters["step_speedup"] = decode[0] / decode[1];
  state.counters["union_mean"] = union_total / static_cast<double>(s.sources.size());
  state.counters["vocab"] = s.model->info().vocab_size;
  state.counters["identical"] = identical / n;
}

}  // namespace

void RegisterShortlistBenchmarks(const BenchConfig& config) {
  const char* model = std::getenv("HEADWISE_BENCH_SHORTLIST_MODEL");
  const char* text = std::getenv("HEADWISE_BENCH_SHORTLIST_TEXT");
  if (model == nullptr || text == nullptr || config.smoke) return;
  const char* lines_env = std::getenv("HEADWISE_BENCH_SHORTLIST_LINES");
  const size_t lines = lines_env != nullptr ? static_cast<size_t>(std::atoi(lines_env)) : 100;
  for (int beam : {1, 4}) {
    auto* b = benchmark::RegisterBenchmark(
        ("model/shortlist_real/beam:" + std::to_string(beam)).c_str(), BM_ShortlistReal,
        std::string(model), std::string(text), lines, beam);
    b->Unit(benchmark::kMillisecond);
    b->Iterations(3);
  }
}

}  // namespace headwise::bench
