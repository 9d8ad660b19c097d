// headwise_bench: Google Benchmark main with the default (1-2 minutes), --long and --smoke
// sets. Every other flag goes to Google Benchmark (--benchmark_format=json,
// --benchmark_out=FILE, --benchmark_filter=REGEX, ...).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/bench_util.h"

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--rss-probe") == 0) {
    return headwise::bench::RunRssProbe(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  }
  headwise::bench::BenchConfig config;
  const char* env = std::getenv("HEADWISE_BENCH_LONG");
  config.long_set = env != nullptr && std::strcmp(env, "0") != 0 && *env != '\0';
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--long") == 0) {
      config.long_set = true;
    } else if (std::strcmp(argv[i], "--smoke") == 0) {
      config.smoke = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;
  headwise::bench::RegisterOperatorBenchmarks(config);
  headwise::bench::RegisterInt8KernelBenchmarks(config);
  headwise::bench::RegisterF32PathBenchmarks(config);
  headwise::bench::RegisterLayerBenchmarks(config);
  headwise::bench::RegisterModelBenchmarks(config);
  headwise::bench::RegisterLoadBenchmarks(config);
  headwise::bench::RegisterBandwidthBenchmarks(config);
  headwise::bench::RegisterFileModelBenchmarks(config);
  headwise::bench::RegisterShortlistBenchmarks(config);
  headwise::bench::RegisterPeakBenchmarks(config);
  benchmark::AddCustomContext("set", config.smoke ? "smoke" : config.long_set ? "long" : "default");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
