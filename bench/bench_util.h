// bench/bench_util.h: what the benchmark files share: the long/short set switch, the
// registration entry points of each file, and memory readings.
#ifndef HEADWISE_BENCH_BENCH_UTIL_H_
#define HEADWISE_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <string>

namespace headwise::bench {

struct BenchConfig {
  bool long_set = false;  // --long or HEADWISE_BENCH_LONG=1: every size and shape
  bool smoke = false;     // --smoke: the tiny model only, a few iterations (CI)
};

// Each file registers its benchmarks for the chosen set (bench_main.cc calls them in order).
void RegisterOperatorBenchmarks(const BenchConfig& config);
void RegisterInt8KernelBenchmarks(const BenchConfig& config);
void RegisterLayerBenchmarks(const BenchConfig& config);
void RegisterModelBenchmarks(const BenchConfig& config);
void RegisterLoadBenchmarks(const BenchConfig& config);
// Only with HEADWISE_BENCH_SHORTLIST_MODEL and _TEXT set (shortlist_bench.cc).
void RegisterShortlistBenchmarks(const BenchConfig& config);

// VmHWM / VmRSS of this process in bytes (0 when /proc is not readable).
size_t PeakRssBytes();
size_t CurrentRssBytes();

// Runs this executable again as `exe --rss-probe MODEL_PATH THREADS` and returns the child's
// peak RSS after it loaded MODEL_PATH, created a Translator and translated one sentence
// (0 on failure). A fresh process, so the parent's own memory does not count.
size_t ProbePeakRss(const std::string& model_path, int threads);
// The child side; returns the exit status.
int RunRssProbe(const char* model_path, int threads);

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
