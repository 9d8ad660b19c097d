// Load-time and memory benchmarks per model size and weight format.
//   load/SIZE/weights:W   Model::Load from a file (mapping, verification, checksum) plus
//                         Translator::Create (operator creation, packing where a path packs),
//                         with the file size, the weight bytes, the arena bytes and the peak RSS
//                         of a fresh process that loads the model and translates one sentence.
//   memory/SIZE/weights:W/translators:T
//                         weights held once (issue 14): the peak RSS of a fresh process that
//                         loads the model file, creates T Translators on it and translates one
//                         sentence with each, against the file size plus the arenas. Counters:
//                         file_bytes, arena_bytes (all Translators), baseline_rss_bytes (the
//                         process before the model), peak_rss_bytes, over_file_arena_bytes
//                         (peak - file - arena: what the process holds beyond one copy of the
//                         file and its arenas, the baseline included), within_16MiB (1 when
//                         over_file_arena_bytes <= 16 MiB, the bound issue 14 sets), and
//                         weights_in_place (1 when no operator packs a copy: kernel_paths names
//                         no XNNPACK path); the label is the Translator's kernel_paths().
//                         The default set runs the 512-wide base model, the smoke set the tiny
//                         one. --benchmark_filter=memory --benchmark_format=json gives the JSON.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"

namespace headwise::bench {
namespace {

size_t StatusField(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return static_cast<size_t>(std::stoull(line.substr(n + 1))) * 1024;  // kB
    }
  }
  return 0;
}

TranslatorLimits OneSentence(int threads) {
  TranslatorLimits l;
  l.max_batch = 1;
  l.max_beam = 1;
  l.max_source_tokens = 64;
  l.max_target_tokens = 64;
  l.num_threads = threads;
  return l;
}

void BM_Load(benchmark::State& state, SyntheticOptions o) {
  const std::vector<uint8_t> image = SerializeSynthetic(o);
  const std::string path = WriteTemp(image, std::string(o.size.name) + "_" + WeightFormatName(o.weights));
  size_t arena = 0, weights = 0;
  for (auto _ : state) {
    Result<std::shared_ptr<const Model>> model = Model::Load(path);
    if (!model.ok()) Die(model.status().ToString());
    Result<std::unique_ptr<Translator>> tr = Translator::Create(*model, OneSentence(1));
    if (!tr.ok()) Die(tr.status().ToString());
    arena = (*tr)->arena_bytes();
    weights = (*model)->info().weight_bytes;
  }
  state.counters["file_bytes"] = static_cast<double>(image.size());
  state.counters["weight_bytes"] = static_cast<double>(weights);
  state.counters["arena_bytes"] = static_cast<double>(arena);
  state.counters["peak_rss_bytes"] = static_cast<double>(ProbeRss(path, 1).peak);
  std::remove(path.c_str());
}

void BM_Memory(benchmark::State& state, SyntheticOptions o, int translators) {
  const std::vector<uint8_t> image = SerializeSynthetic(o);
  const std::string path = WriteTemp(image, std::string(o.size.name) + "_" +
                                                WeightFormatName(o.weights) + "_memory");
  std::string paths;
  {
    Result<std::shared_ptr<const Model>> model = Model::Load(path);
    if (!model.ok()) Die(model.status().ToString());
    Result<std::unique_ptr<Translator>> tr = Translator::Create(*model, OneSentence(1));
    if (!tr.ok()) Die(tr.status().ToString());
    paths = (*tr)->kernel_paths();
  }
  RssProbe r;
  for (auto _ : state) {
    r = ProbeRss(path, 1, translators);
    if (r.peak == 0) Die("the RSS probe failed for " + path);
  }
  const double file = static_cast<double>(image.size());
  const double over = static_cast<double>(r.peak) - file - static_cast<double>(r.arena);
  state.counters["file_bytes"] = file;
  state.counters["arena_bytes"] = static_cast<double>(r.arena);
  state.counters["baseline_rss_bytes"] = static_cast<double>(r.baseline);
  state.counters["peak_rss_bytes"] = static_cast<double>(r.peak);
  state.counters["over_file_arena_bytes"] = over;
  state.counters["within_16MiB"] = over <= 16.0 * (1 << 20) ? 1 : 0;
  state.counters["weights_in_place"] = paths.find("xnnpack") == std::string::npos ? 1 : 0;
  state.SetLabel(paths);
  std::remove(path.c_str());
}

}  // namespace

size_t PeakRssBytes() { return StatusField("VmHWM"); }
size_t CurrentRssBytes() { return StatusField("VmRSS"); }

int RunRssProbe(const char* model_path, int threads, int translators) {
  const size_t baseline = PeakRssBytes();
  Result<std::shared_ptr<const Model>> model = Model::Load(model_path);
  if (!model.ok() || translators < 1) return 1;
  const ModelInfo& info = (*model)->info();
  const ModelSize size{"probe", static_cast<uint32_t>(info.d_model), 0, 0, 1, 0,
                       static_cast<uint32_t>(info.vocab_size)};
  const std::vector<int32_t> src = SyntheticSource(size, 20, 1);
  const TokenSpan span{src.data(), src.size()};
  std::vector<std::unique_ptr<Translator>> all;
  size_t arena = 0;
  for (int t = 0; t < translators; ++t) {
    Result<std::unique_ptr<Translator>> tr = Translator::Create(*model, OneSentence(threads));
    if (!tr.ok()) return 1;
    arena += (*tr)->arena_bytes();
    all.push_back(std::move(*tr));
  }
  for (const auto& tr : all) {
    if (!tr->TranslateIds(&span, 1, SearchOptions()).ok()) return 1;
  }
  std::printf("%zu %zu %zu\n", PeakRssBytes(), baseline, arena);
  return 0;
}

RssProbe ProbeRss(const std::string& model_path, int threads, int translators) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    const std::string t = std::to_string(threads), n = std::to_string(translators);
    execl("/proc/self/exe", "headwise_bench", "--rss-probe", model_path.c_str(), t.c_str(),
          n.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char chunk[64];
  ssize_t got;
  while ((got = read(fds[0], chunk, sizeof chunk)) > 0) text.append(chunk, static_cast<size_t>(got));
  close(fds[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {};
  }
  RssProbe r;
  std::istringstream in(text);
  if (!(in >> r.peak >> r.baseline >> r.arena)) return {};
  return r;
}

void RegisterLoadBenchmarks(const BenchConfig& config) {
  std::vector<ModelSize> sizes = {config.smoke ? kTiny : kShipped};
  if (config.long_set) sizes.push_back(kBase);
  for (const ModelSize& z : sizes) {
    for (WeightFormat format :
         {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8}) {
      SyntheticOptions o{z, z.heads, z.heads, z.heads, 1};
      o.weights = format;
      const std::string name = std::string("load/") + z.name + "/weights:" +
                               WeightFormatName(format);
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Load, o);
      b->Unit(benchmark::kMillisecond);
      b->Iterations(config.smoke ? 1 : 3);
    }
  }
  const ModelSize memory_size = config.smoke ? kTiny : kBase;
  for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8}) {
    for (int translators : {1, 2}) {
      SyntheticOptions o{memory_size, memory_size.heads, memory_size.heads, memory_size.heads, 1};
      o.weights = format;
      const std::string name = std::string("memory/") + memory_size.name + "/weights:" +
                               WeightFormatName(format) + "/translators:" +
                               std::to_string(translators);
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Memory, o, translators);
      b->Unit(benchmark::kMillisecond);
      b->Iterations(1);
    }
  }
}

}  // namespace headwise::bench
