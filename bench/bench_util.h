// bench/bench_util.h: what the benchmark files share: the long/short set switch, the
// registration entry points of each file, and memory readings.
#ifndef HEADWISE_BENCH_BENCH_UTIL_H_
#define HEADWISE_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <string>

#include "headwise/headwise.hpp"

namespace headwise::bench {

struct BenchConfig {
  bool long_set = false;  // --long or HEADWISE_BENCH_LONG=1: every size and shape
  bool smoke = false;     // --smoke: the tiny model only, a few iterations (CI)
};

// Each file registers its benchmarks for the chosen set (bench_main.cc calls them in order).
void RegisterOperatorBenchmarks(const BenchConfig& config);
void RegisterInt8KernelBenchmarks(const BenchConfig& config);
void RegisterF32PathBenchmarks(const BenchConfig& config);
void RegisterLayerBenchmarks(const BenchConfig& config);
void RegisterModelBenchmarks(const BenchConfig& config);
void RegisterLoadBenchmarks(const BenchConfig& config);  // load/ and memory/
void RegisterBandwidthBenchmarks(const BenchConfig& config);
void RegisterFileModelBenchmarks(const BenchConfig& config);

// Only with HEADWISE_BENCH_SHORTLIST_MODEL and _TEXT set (shortlist_bench.cc).
void RegisterShortlistBenchmarks(const BenchConfig& config);
// op/peak: the core's fp32 FMA and int8 VNNI peak, measured (peak_bench.cc).
void RegisterPeakBenchmarks(const BenchConfig& config);

// VmHWM / VmRSS of this process in bytes (0 when /proc is not readable).
size_t PeakRssBytes();
size_t CurrentRssBytes();

// What a fresh process held (bytes; all 0 on failure).
struct RssProbe {
  size_t peak = 0;      // VmHWM at the end
  size_t baseline = 0;  // VmHWM before the model was loaded
  size_t arena = 0;     // the Translators' arena_bytes() summed
};
// Runs this executable again as `exe --rss-probe MODEL_PATH THREADS TRANSLATORS`: the child
// loads MODEL_PATH (Model::Load), creates TRANSLATORS Translators (batch 1, beam 1, 64 tokens,
// THREADS threads) and translates one 20-token sentence with each. A fresh process, so the
// parent's own memory does not count.
RssProbe ProbeRss(const std::string& model_path, int threads, int translators = 1);
// The child side; returns the exit status.
int RunRssProbe(const char* model_path, int threads, int translators);

// CPU time of the calling thread: on a busy machine it excludes the time other processes
// hold the core (wall time does not), so ratios measured with it are steadier.
inline double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

inline double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace headwise::bench

#endif  // HEADWISE_BENCH_BENCH_UTIL_H_
