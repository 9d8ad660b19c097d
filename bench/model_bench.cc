// Model-level benchmarks on synthetic models (bench/synthetic_model.h): end-to-end sentence
// latency and throughput (encode a 20-token source + greedy-decode 64 tokens) for batch 1 and
// 16, 1 and 2 threads; the same at batch 1 for the candidate shapes of an on-device model
// (model/shape/: 6 encoder layers x 8 heads, as the pruning study needs, and other widths and
// decoder depths; models/en-de/README.md says which was chosen and why); latency per remaining
// head count (encoder heads only, and all three
// attention kinds cut together), each point with the vocabulary shortlist off and on; the
// decode step against its matrix products run alone; and the decode step with the shortlist
// on against off.
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/decode_step.h"
#include "bench/synthetic_model.h"
#include "encoder.h"
#include "search.h"
#include "translator_impl.h"

namespace headwise::bench {
namespace {

constexpr size_t kSourceLength = 20;
constexpr int kSteps = 64;

std::string Key(const SyntheticOptions& o) {
  return std::string(o.size.name) + "/" + std::to_string(o.encoder_heads) + "/" +
         std::to_string(o.decoder_self_heads) + "/" + std::to_string(o.decoder_cross_heads) + "/" +
         WeightFormatName(o.weights) + (o.shortlist ? "/shortlist" : "");
}

// Benchmarks run in registration order, so consecutive ones on the same model share it; one
// model is held at a time (transformer-base images are ~300 MB).
const LoadedModel& CachedModel(const SyntheticOptions& o) {
  static std::string key;
  static std::unique_ptr<LoadedModel> model;
  if (model == nullptr || key != Key(o)) {
    model.reset();
    model = LoadSynthetic(o);
    key = Key(o);
  }
  return *model;
}

TranslatorLimits Limits(int batch, int threads, bool shortlist = true) {
  TranslatorLimits l;
  l.use_shortlist = shortlist;
  l.max_batch = batch;
  l.max_beam = 1;
  l.max_source_tokens = 64;
  l.max_target_tokens = kSteps;
  l.num_threads = threads;
  return l;
}

void BM_Greedy(benchmark::State& state, SyntheticOptions o, int batch, int threads) {
  const LoadedModel& m = CachedModel(o);
  Result<std::unique_ptr<Translator>> tr = Translator::Create(m.model, Limits(batch, threads));
  if (!tr.ok()) Die(tr.status().ToString());
  std::vector<std::vector<int32_t>> sources;
  std::vector<TokenSpan> spans;
  for (int b = 0; b < batch; ++b) sources.push_back(SyntheticSource(o.size, kSourceLength, 1 + b));
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  SearchOptions search;
  search.max_length = kSteps;
  for (auto _ : state) {
    if (!(*tr)->TranslateIds(spans.data(), spans.size(), search).ok()) Die("TranslateIds failed");
  }
  for (int b = 0; b < batch; ++b) {
    if ((*tr)->hypothesis(b, 0).size != kSteps) {
      state.SkipWithError("a synthetic translation ended before the fixed length");
    }
  }
  const double full = TranslationMacs(SyntheticOptions{o.size, o.size.heads, o.size.heads, o.size.heads, 1},
                                      batch, kSourceLength, kSteps);
  const double macs = TranslationMacs(o, batch, kSourceLength, kSteps);
  state.counters["batch"] = batch;
  state.counters["threads"] = threads;
  state.counters["encoder_heads"] = o.encoder_heads * o.size.encoder_layers;
  state.counters["decoder_self_heads"] = o.decoder_self_heads * o.size.decoder_layers;
  state.counters["cross_heads"] = o.decoder_cross_heads * o.size.decoder_layers;
  state.counters["macs"] = macs;
  state.counters["work_fraction"] = macs / full;
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(batch) * kSteps,
                                                      benchmark::Counter::kIsIterationInvariantRate);
  state.counters["sentences_per_s"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["arena_bytes"] = static_cast<double>((*tr)->arena_bytes());
}

// One iteration: greedy 64 tokens, greedy 1 token (encoder + first step), and the decoder's
// matrix products for 63 steps run alone on fixed inputs, all in CPU time of this thread (one
// thread: no pool). decode step = (t64 - t1) / 63; the ratio of the two is the runtime's
// overhead over its kernels, measured within one run.
void BM_DecodeStepVsMatrixOps(benchmark::State& state, SyntheticOptions o) {
  const LoadedModel& m = CachedModel(o);
  Result<std::unique_ptr<Translator::Impl>> made = CreateTranslatorImpl(m.model, Limits(1, 1));
  if (!made.ok()) Die(made.status().ToString());
  Translator::Impl& t = **made;
  const std::vector<int32_t> src = SyntheticSource(o.size, kSourceLength, 1);
  const TokenSpan span{src.data(), src.size()};
  const size_t widest = std::max<size_t>({o.size.ffn, o.size.vocab, 3 * o.size.d_model});
  std::vector<float> in(widest, 0.1f), out(widest);
  double step_total = 0, ops_total = 0;
  for (auto _ : state) {
    const double decode_step = DecodeStepSeconds(t, span, kSteps);
    const double t0 = ThreadCpuSeconds();
    for (int step = 1; step < kSteps; ++step) {
      for (const DecoderLayerOps& ops : t.net.decoder) {
        for (const FullyConnected* fc : {&ops.self_qkv, &ops.self_out, &ops.cross_q, &ops.cross_out, &ops.fc1, &ops.fc2}) {
          if (fc->valid() && !fc->Run(1, in.data(), out.data(), nullptr).ok()) Die("fc failed");
        }
      }
      if (!t.net.lm_head.Run(1, in.data(), out.data(), nullptr).ok()) Die("lm_head failed");
    }
    const double ops = ThreadCpuSeconds() - t0;
    step_total += decode_step;
    ops_total += ops / (kSteps - 1);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["decode_step_us"] = step_total / n * 1e6;
  state.counters["matrix_ops_us"] = ops_total / n * 1e6;
  state.counters["step_over_matrix_ops"] = step_total / ops_total;
}

// The decode step with the vocabulary shortlist on against off, on one model that carries it
// (bench/synthetic_model.h's synthetic shortlist): per iteration, each translator runs greedy
// 64 tokens and greedy 1 token, alternating, in CPU time of this thread; decode step =
// (t64 - t1) / 63. `beam` 4: beam search, every beam running the 64 steps (the synthetic EOS
// never wins), so a step is 4 rows. Counters decode_step_us_off / _on, step_speedup (off /
// on), union (pieces the shortlist allows for the source) and vocab.
void BM_DecodeStepShortlist(benchmark::State& state, SyntheticOptions o, int beam) {
  o.shortlist = true;
  const LoadedModel& m = CachedModel(o);
  std::unique_ptr<Translator> on, off;
  for (bool use : {true, false}) {
    TranslatorLimits limits = Limits(1, 1, use);
    limits.max_beam = beam;
    Result<std::unique_ptr<Translator>> tr = Translator::Create(m.model, limits);
    if (!tr.ok()) Die(tr.status().ToString());
    (use ? on : off) = std::move(tr).value();
  }
  if (!on->uses_shortlist() || off->uses_shortlist()) Die("the shortlist switch does not work");
  const std::vector<int32_t> src = SyntheticSource(o.size, kSourceLength, 1);
  const TokenSpan span{src.data(), src.size()};
  SearchOptions full, one;
  full.max_length = kSteps;
  one.max_length = 1;
  full.beam_size = one.beam_size = beam;
  double step[2] = {0, 0};
  for (auto _ : state) {
    for (int i = 0; i < 2; ++i) {
      Translator& t = i == 0 ? *off : *on;
      double t0 = ThreadCpuSeconds();
      if (!t.TranslateIds(&span, 1, full).ok()) Die("TranslateIds failed");
      const double t64 = ThreadCpuSeconds() - t0;
      if (t.hypothesis(0, 0).size != kSteps) {
        state.SkipWithError("a synthetic translation ended before the fixed length");
      }
      t0 = ThreadCpuSeconds();
      if (!t.TranslateIds(&span, 1, one).ok()) Die("TranslateIds failed");
      const double t1 = ThreadCpuSeconds() - t0;
      step[i] += (t64 - t1) / (kSteps - 1);
    }
  }
  const double n = static_cast<double>(state.iterations());
  auto pieces = m.model->ShortlistPieces({src});
  state.counters["decode_step_us_off"] = step[0] / n * 1e6;
  state.counters["decode_step_us_on"] = step[1] / n * 1e6;
  state.counters["step_speedup"] = step[0] / step[1];
  state.counters["union"] = pieces.ok() ? static_cast<double>(pieces->size()) : 0.0;
  state.counters["vocab"] = o.size.vocab;
}

// Latency per remaining head count: 48, 36, 24, 12, 6, 0 encoder heads (6 layers x 8 heads =
// 8, 6, 4, 2, 1, 0 per layer), with the decoder's self- and cross-attention kept whole
// (`everything` false) or cut to the same per-layer count. Every model translates once per
// iteration, round robin, timed in CPU time of this thread, so a change in machine load hits
// every point alike and the ratios stay meaningful on a busy machine. Counters ms_heads_K and
// work_heads_K (multiply-adds relative to all heads) per encoder head total K. Each model
// carries the synthetic vocabulary shortlist; ms_heads_K is without it (use_shortlist false),
// ms_heads_K_shortlist with it, both measured in the same iterations.
void BM_HeadsSweep(benchmark::State& state, ModelSize z, bool everything,
                   WeightFormat format) {
  struct Point {
    uint32_t total_heads;
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<Translator> translator;  // full vocabulary
    std::unique_ptr<Translator> shortlisted;
    double cpu = 0, cpu_shortlist = 0;
    double work = 0;
  };
  std::vector<Point> points;
  const SyntheticOptions all{z, z.heads, z.heads, z.heads, 1, format, /*shortlist=*/true};
  const double full = TranslationMacs(all, 1, kSourceLength, kSteps);
  for (uint32_t per_layer : {8u, 6u, 4u, 2u, 1u, 0u}) {
    const uint32_t k = per_layer * z.heads / 8;
    if (!points.empty() && points.back().total_heads == k * z.encoder_layers) continue;
    SyntheticOptions o = all;
    o.encoder_heads = k;
    if (everything) o.decoder_self_heads = o.decoder_cross_heads = k;
    Point p;
    p.total_heads = k * z.encoder_layers;
    p.model = LoadSynthetic(o);
    Result<std::unique_ptr<Translator>> tr = Translator::Create(p.model->model, Limits(1, 1, false));
    if (!tr.ok()) Die(tr.status().ToString());
    p.translator = std::move(tr).value();
    tr = Translator::Create(p.model->model, Limits(1, 1, true));
    if (!tr.ok()) Die(tr.status().ToString());
    p.shortlisted = std::move(tr).value();
    p.work = TranslationMacs(o, 1, kSourceLength, kSteps) / full;
    points.push_back(std::move(p));
  }
  const std::vector<int32_t> src = SyntheticSource(z, kSourceLength, 1);
  const TokenSpan span{src.data(), src.size()};
  SearchOptions search;
  search.max_length = kSteps;
  for (auto _ : state) {
    for (Point& p : points) {
      for (Translator* t : {p.translator.get(), p.shortlisted.get()}) {
        const double t0 = ThreadCpuSeconds();
        if (!t->TranslateIds(&span, 1, search).ok()) Die("TranslateIds failed");
        (t == p.translator.get() ? p.cpu : p.cpu_shortlist) += ThreadCpuSeconds() - t0;
        if (t->hypothesis(0, 0).size != kSteps) {
          state.SkipWithError("a synthetic translation ended before the fixed length");
        }
      }
    }
  }
  const double n = static_cast<double>(state.iterations());
  for (const Point& p : points) {
    state.counters["ms_heads_" + std::to_string(p.total_heads)] = p.cpu / n * 1e3;
    state.counters["ms_heads_" + std::to_string(p.total_heads) + "_shortlist"] =
        p.cpu_shortlist / n * 1e3;
    state.counters["work_heads_" + std::to_string(p.total_heads)] = p.work;
  }
}

// Candidate shapes of the shipped model: 6 encoder layers x 8 heads (the paper's encoder, which
// the pruning study compares with), the shipped vocabulary, and other widths and decoder depths.
constexpr ModelSize kShapeCandidates[] = {
    {"d256-dec2", 256, 6, 2, 8, 1024, 8000}, {"d256-dec3", 256, 6, 3, 8, 1024, 8000},
    {"d256-dec6", 256, 6, 6, 8, 1024, 8000}, {"d384-dec3", 384, 6, 3, 8, 1536, 8000},
    {"d512-dec3", 512, 6, 3, 8, 2048, 8000}, {"d512-dec6", 512, 6, 6, 8, 2048, 8000},
};

}  // namespace

void RegisterModelBenchmarks(const BenchConfig& config) {
  if (!config.smoke) {
    for (const ModelSize& z : kShapeCandidates) {
      for (WeightFormat format : {WeightFormat::kI8, WeightFormat::kF32}) {
        const SyntheticOptions o{z, z.heads, z.heads, z.heads, 1, format};
        const std::string name = std::string("model/shape/") + z.name + "/weights:" +
                                 WeightFormatName(format);
        auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Greedy, o, 1, 1);
        b->Unit(benchmark::kMillisecond);
      }
    }
  }
  std::vector<ModelSize> sizes = {config.smoke ? kTiny : kShipped};
  if (config.long_set) sizes.push_back(kBase);
  for (const ModelSize& z : sizes) {
    const SyntheticOptions all{z, z.heads, z.heads, z.heads, 1};
    for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8}) {
      SyntheticOptions o = all;
      o.weights = format;
      const std::string fmt = std::string("/weights:") + WeightFormatName(format);
      const bool f16 = format == WeightFormat::kF16;
      for (int batch : {1, 16}) {
        for (int threads : {1, 2}) {
          if (f16 && threads == 2) continue;  // fp16: the one-thread speed only
          // Batch 16 on 2 threads takes 15-30 s per call on a loaded 2-core machine (every
          // parallel region waits for a descheduled worker): long set only.
          if (batch == 16 && threads == 2 && !config.long_set && !config.smoke) continue;
          const std::string name = std::string("model/greedy/") + z.name + fmt + "/batch:" +
                                   std::to_string(batch) + "/threads:" + std::to_string(threads);
          auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Greedy, o, batch, threads);
          b->Unit(benchmark::kMillisecond);
          if (threads > 1) b->UseRealTime();
          if (config.smoke) b->Iterations(2);
        }
      }
      if (f16) continue;
      auto* d = benchmark::RegisterBenchmark(
          (std::string("model/decode_step_vs_matrix_ops/") + z.name + fmt).c_str(),
          BM_DecodeStepVsMatrixOps, o);
      d->Unit(benchmark::kMillisecond);
      if (config.smoke) d->Iterations(2);
      for (int beam : {1, 4}) {
        auto* sl = benchmark::RegisterBenchmark(
            (std::string("model/decode_step_shortlist/") + z.name + fmt + "/beam:" +
             std::to_string(beam)).c_str(),
            BM_DecodeStepShortlist, o, beam);
        sl->Unit(benchmark::kMillisecond);
        if (config.smoke) sl->Iterations(2);
      }
    }
    std::vector<std::pair<const char*, WeightFormat>> sweeps = {
        {"encoder", WeightFormat::kF32}, {"all", WeightFormat::kF32},
        {"all", WeightFormat::kI8}};
    if (config.long_set) sweeps.push_back({"encoder", WeightFormat::kI8});
    for (const auto& [cut, format] : sweeps) {
      const std::string name = std::string("model/heads_sweep/") + z.name + "/weights:" +
                               WeightFormatName(format) + "/" + cut;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_HeadsSweep, z,
                                             std::string(cut) == "all", format);
      b->Unit(benchmark::kMillisecond);
      b->Iterations(config.smoke ? 1 : z.d_model > 256 ? 3 : 5);
    }
  }
}

}  // namespace headwise::bench
