// How close a batch-1 decode step comes to the machine's memory bandwidth, and what a second
// thread buys, on synthetic models (bench/synthetic_model.h) loaded from a file as a user loads
// one (LoadSyntheticFile: mapped, so int8 runs on the packed layout where the CPU has one).
//
// model/decode_bandwidth/SIZE/weights:W: one iteration runs, in CPU time of this thread (one
// thread, no pool), a plain streaming read of a buffer as large as the weights one decode step
// reads (the decoder's matrices with their scales and biases, and lm_head; kStreamPasses times),
// greedy decoding of 64 and of 1 token (decode step = (t64 - t1) / 63, as
// model/decode_step_vs_matrix_ops), and the streaming read again. The two see the same cache
// level, so
//   step_GBps = weight bytes per step / decode step,  stream_GBps = the read loop's rate,
//   step_over_stream = the median over iterations of (the mean time of the two reads around the
//       step) / (the decode step time), i.e. step GB/s over stream GB/s,
//   step_over_stream_min / _max their range
// is the share of the attainable bandwidth the decode step reaches (1 = as fast as reading the
// weights and doing nothing else).
//
// model/threads/SIZE/weights:W/batch:B/wait:yield|spin: the same translation (encode 20 tokens,
// greedy 64) on a one-thread and on a two-thread Translator in turn within each iteration, wall
// time; the two-thread one's workers yield (the default) or spin (WorkerWait). Counters
// ms_1_thread, ms_2_threads and speedup_2_threads (ms_1 / ms_2). In the same iterations a plain
// streaming read of the decode step's weight bytes by one thread and by two (each half the
// buffer): stream_speedup_2_threads, the most a second thread can buy a step that only reads
// its weights, and stream_GBps_1_thread / stream_GBps_2_threads. Only meaningful on a machine
// with two otherwise idle cores. Each wait is its own benchmark: spinning workers keep spinning
// for a while after a translation, which would slow another two-thread Translator run next.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/decode_step.h"
#include "bench/synthetic_model.h"
#include "encoder.h"
#include "search.h"
#include "translator_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace headwise::bench {
namespace {

constexpr size_t kSourceLength = 20;
constexpr int kSteps = 64;
constexpr int kStreamPasses = 8;

size_t MatrixBytes(const WeightView& w) {
  if (w.empty()) return 0;
  return w.elements() * DTypeSize(w.dtype) + (w.scale != nullptr ? w.rows * sizeof(float) : 0);
}

size_t AttentionStepBytes(const AttentionWeights& a, bool cross) {
  if (a.num_heads == 0) return 0;
  size_t bytes = MatrixBytes(a.q_w) + MatrixBytes(a.q_b) + MatrixBytes(a.out_w) + MatrixBytes(a.out_b);
  if (!cross) bytes += MatrixBytes(a.k_w) + MatrixBytes(a.k_b) + MatrixBytes(a.v_w) + MatrixBytes(a.v_b);
  return bytes;
}

// The weight bytes one decode step reads: the decoder's per-step matrices (self-attention
// q/k/v/out, cross-attention q/out, fc1, fc2) with their scales and biases, and lm_head with
// final_logits_bias (cross-attention k/v run once per call, on the encoder output).
size_t DecodeStepWeightBytes(const Model::Impl& m) {
  size_t bytes = MatrixBytes(m.lm_head) + MatrixBytes(m.final_logits_bias);
  for (const DecoderLayerWeights& l : m.decoder_layers) {
    bytes += AttentionStepBytes(l.self_attn, false) + AttentionStepBytes(l.cross_attn, true);
    bytes += MatrixBytes(l.ffn.fc1_w) + MatrixBytes(l.ffn.fc1_b) + MatrixBytes(l.ffn.fc2_w) +
             MatrixBytes(l.ffn.fc2_b);
  }
  return bytes;
}

// A plain streaming read: the sum of every 64-bit word (AVX2 loads on x86 where the CPU has
// them, so the loop is bound by the memory system, not by instructions).
#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t StreamReadAvx2(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < n; ++i) sum += p[i];
  return sum;
}
#endif

uint64_t StreamRead(const uint8_t* p, size_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return StreamReadAvx2(p, n);
#endif
  uint64_t a[8] = {};
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int j = 0; j < 8; ++j) {
      uint64_t v;
      std::memcpy(&v, p + i + 8 * j, sizeof v);
      a[j] += v;
    }
  }
  uint64_t sum = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
  for (; i < n; ++i) sum += p[i];
  return sum;
}

// kStreamPasses reads of [p, p + n). The barrier before each keeps the compiler from reading
// once and adding the same sum kStreamPasses times (StreamRead has no side effects).
uint64_t StreamPasses(const uint8_t* p, size_t n) {
  uint64_t sum = 0;
  for (int pass = 0; pass < kStreamPasses; ++pass) {
    benchmark::ClobberMemory();
    sum += StreamRead(p, n);
  }
  return sum;
}

// A 64-byte aligned buffer of `bytes`, every page touched, for StreamRead.
struct StreamBuffer {
  std::vector<uint64_t> words;
  const uint8_t* data = nullptr;
  size_t bytes = 0;
  explicit StreamBuffer(size_t n) : words((n + 63) / 64 * 8 + 8, 1), bytes(n) {
    data = reinterpret_cast<const uint8_t*>((reinterpret_cast<uintptr_t>(words.data()) + 63) / 64 * 64);
  }
};

// Wall seconds of kStreamPasses reads of the buffer by `threads` threads (1 or 2), each its
// part (the second thread's half starts at a 64-byte boundary).
double StreamWallSeconds(const StreamBuffer& b, int threads, uint64_t* sink) {
  const auto t0 = std::chrono::steady_clock::now();
  if (threads == 1) {
    *sink += StreamPasses(b.data, b.bytes);
  } else {
    const size_t half = b.bytes / 2 / 64 * 64;
    uint64_t other = 0;
    std::thread helper([&] { other = StreamPasses(b.data + half, b.bytes - half); });
    *sink += StreamPasses(b.data, half);
    helper.join();
    *sink += other;
  }
  return SecondsSince(t0);
}

TranslatorLimits Limits(int batch, int threads, WorkerWait wait = WorkerWait::kYield) {
  TranslatorLimits l;
  l.worker_wait = wait;
  l.max_batch = batch;
  l.max_beam = 1;
  l.max_source_tokens = 64;
  l.max_target_tokens = kSteps;
  l.num_threads = threads;
  return l;
}

void BM_DecodeBandwidth(benchmark::State& state, SyntheticOptions o) {
  const std::shared_ptr<const Model> model = LoadSyntheticFile(o);
  Result<std::unique_ptr<Translator::Impl>> made = CreateTranslatorImpl(model, Limits(1, 1));
  if (!made.ok()) Die(made.status().ToString());
  Translator::Impl& t = **made;
  const size_t bytes = DecodeStepWeightBytes(t.model_impl());
  const StreamBuffer buffer(bytes);
  const uint8_t* stream = buffer.data;
  const std::vector<int32_t> src = SyntheticSource(o.size, kSourceLength, 1);
  const TokenSpan span{src.data(), src.size()};
  // Each iteration reads the buffer before and after the decode measurement and compares the
  // step with the mean of the two: the memory's neighbours on a shared machine change its
  // bandwidth within seconds, so a ratio of totals mixed minutes apart; the per-iteration ratios'
  // median (and range) follow what the step met.
  const auto pass_seconds = [&](uint64_t* sink) {
    const double t0 = ThreadCpuSeconds();
    *sink += StreamPasses(stream, bytes);
    return (ThreadCpuSeconds() - t0) / kStreamPasses;
  };
  std::vector<double> ratios;
  double step_total = 0, stream_total = 0;
  uint64_t sink = 0;
  for (auto _ : state) {
    const double before = pass_seconds(&sink);
    const double step = DecodeStepSeconds(t, span, kSteps);
    const double pass = (before + pass_seconds(&sink)) / 2;
    ratios.push_back(pass / step);
    stream_total += pass;
    step_total += step;
  }
  benchmark::DoNotOptimize(sink);
  std::sort(ratios.begin(), ratios.end());
  const double n = static_cast<double>(state.iterations());
  const double step = step_total / n, pass = stream_total / n;
  state.counters["weight_MB_per_step"] = static_cast<double>(bytes) / 1e6;
  state.counters["decode_step_us"] = step * 1e6;
  state.counters["step_GBps"] = static_cast<double>(bytes) / step / 1e9;
  state.counters["stream_GBps"] = static_cast<double>(bytes) / pass / 1e9;
  const size_t m = ratios.size();
  state.counters["step_over_stream"] = m % 2 ? ratios[m / 2] : (ratios[m / 2 - 1] + ratios[m / 2]) / 2;
  state.counters["step_over_stream_min"] = ratios.front();
  state.counters["step_over_stream_max"] = ratios.back();
  state.SetLabel(t.kernel_paths);
}

void BM_Threads(benchmark::State& state, SyntheticOptions o, int batch, WorkerWait wait) {
  const std::shared_ptr<const Model> model = LoadSyntheticFile(o);
  std::unique_ptr<Translator> tr[2];
  for (int i = 0; i < 2; ++i) {
    Result<std::unique_ptr<Translator>> made = Translator::Create(model, Limits(batch, i + 1, wait));
    if (!made.ok()) Die(made.status().ToString());
    tr[i] = std::move(made).value();
  }
  std::vector<std::vector<int32_t>> sources;
  std::vector<TokenSpan> spans;
  for (int b = 0; b < batch; ++b) sources.push_back(SyntheticSource(o.size, kSourceLength, 1 + b));
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  SearchOptions search;
  search.max_length = kSteps;
  const StreamBuffer buffer(DecodeStepWeightBytes(model->impl()));
  uint64_t sink = 0;
  double wall[2] = {0, 0}, stream[2] = {0, 0};
  for (auto _ : state) {
    for (int i = 0; i < 2; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!tr[i]->TranslateIds(spans.data(), spans.size(), search).ok()) Die("TranslateIds failed");
      wall[i] += SecondsSince(t0);
      stream[i] += StreamWallSeconds(buffer, i + 1, &sink);
    }
  }
  benchmark::DoNotOptimize(sink);
  const double n = static_cast<double>(state.iterations());
  state.counters["ms_1_thread"] = wall[0] / n * 1e3;
  state.counters["ms_2_threads"] = wall[1] / n * 1e3;
  state.counters["speedup_2_threads"] = wall[0] / wall[1];
  const double read = static_cast<double>(buffer.bytes) * kStreamPasses * n;
  state.counters["stream_GBps_1_thread"] = read / stream[0] / 1e9;
  state.counters["stream_GBps_2_threads"] = read / stream[1] / 1e9;
  state.counters["stream_speedup_2_threads"] = stream[0] / stream[1];
  state.counters["batch"] = batch;
}

}  // namespace

void RegisterBandwidthBenchmarks(const BenchConfig& config) {
  const ModelSize z = config.smoke ? kTiny : kBase;
  for (WeightFormat format : {WeightFormat::kI8, WeightFormat::kF32}) {
    SyntheticOptions o{z, z.heads, z.heads, z.heads, 1, format};
    const std::string fmt = std::string("/weights:") + WeightFormatName(format);
    auto* b = benchmark::RegisterBenchmark(
        (std::string("model/decode_bandwidth/") + z.name + fmt).c_str(), BM_DecodeBandwidth, o);
    b->Unit(benchmark::kMillisecond);
    b->Iterations(config.smoke ? 2 : 9);
    for (int batch : {1, 32}) {
      if (batch > 1 && !config.long_set) continue;
      for (WorkerWait wait : {WorkerWait::kYield, WorkerWait::kSpin}) {
        const char* w = wait == WorkerWait::kSpin ? "/wait:spin" : "/wait:yield";
        auto* t = benchmark::RegisterBenchmark(
            (std::string("model/threads/") + z.name + fmt + "/batch:" + std::to_string(batch) + w).c_str(),
            BM_Threads, o, batch, wait);
        t->Unit(benchmark::kMillisecond);
        t->UseRealTime();
        t->Iterations(config.smoke ? 1 : 5);
      }
    }
  }
}

}  // namespace headwise::bench
