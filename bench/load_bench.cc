// Load-time and memory benchmarks per model size and weight format: Model::Load from a file
// (mapping, verification, checksum) plus Translator::Create (operator creation and weight
// packing), with the file size, the weight bytes, the arena bytes and the peak RSS of a fresh
// process that loads the model and translates one sentence.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
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

std::string WriteTemp(const std::vector<uint8_t>& image, const std::string& tag) {
  const std::string path = "/tmp/headwise_bench_" + std::to_string(getpid()) + "_" + tag + ".hwm";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(image.data(), 1, image.size(), f) != image.size() ||
      std::fclose(f) != 0) {
    Die("cannot write " + path);
  }
  return path;
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
  state.counters["peak_rss_bytes"] = static_cast<double>(ProbePeakRss(path, 1));
  std::remove(path.c_str());
}

}  // namespace

size_t PeakRssBytes() { return StatusField("VmHWM"); }
size_t CurrentRssBytes() { return StatusField("VmRSS"); }

int RunRssProbe(const char* model_path, int threads) {
  Result<std::shared_ptr<const Model>> model = Model::Load(model_path);
  if (!model.ok()) return 1;
  Result<std::unique_ptr<Translator>> tr = Translator::Create(*model, OneSentence(threads));
  if (!tr.ok()) return 1;
  const ModelInfo& info = (*model)->info();
  const ModelSize size{"probe", static_cast<uint32_t>(info.d_model), 0, 0, 1, 0,
                       static_cast<uint32_t>(info.vocab_size)};
  const std::vector<int32_t> src = SyntheticSource(size, 20, 1);
  const TokenSpan span{src.data(), src.size()};
  if (!(*tr)->TranslateIds(&span, 1, SearchOptions()).ok()) return 1;
  std::printf("%zu\n", PeakRssBytes());
  return 0;
}

size_t ProbePeakRss(const std::string& model_path, int threads) {
  int fds[2];
  if (pipe(fds) != 0) return 0;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    const std::string t = std::to_string(threads);
    execl("/proc/self/exe", "headwise_bench", "--rss-probe", model_path.c_str(), t.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char chunk[64];
  ssize_t n;
  while ((n = read(fds[0], chunk, sizeof chunk)) > 0) text.append(chunk, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return 0;
  }
  return static_cast<size_t>(std::strtoull(text.c_str(), nullptr, 10));
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
}

}  // namespace headwise::bench
