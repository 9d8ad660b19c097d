// Per-operator benchmarks: every fully-connected shape of an encoder and a decoder layer (and
// lm_head) at the row counts the runtime runs them with (1 = a decoder step, 20 = one
// sentence's encoder, 320 = 16 sentences), attention over h kept heads, LayerNorm and swish.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/layernorm.h"
#include "fc/fully_connected.h"
#include "format/weight_format.h"
#include "thread_pool.h"
#include "tests/support/random_data.h"
#include "xnn_backend.h"

namespace headwise::bench {
namespace {

using testing::RandomFloats;

// One fully-connected operator on `rows` rows, F32 (XNNPACK) or I8 (headwise's int8 kernel,
// per-row weight scales, activations quantized per row in each run).
void BM_FullyConnected(benchmark::State& state, size_t in, size_t out, size_t rows, int threads,
                       bool int8) {
  if (!InitXnnpack().ok()) Die("xnn_initialize failed");
  const std::vector<float> w = RandomFloats(in * out, 1, 0.05f), b = RandomFloats(out, 2, 0.1f);
  std::vector<int8_t> q;
  const std::vector<float> scales = QuantizeRowsI8(w.data(), out, in, &q);
  FcPart part;
  part.weight = {w.data(), DType::kF32, static_cast<uint32_t>(out), static_cast<uint32_t>(in), nullptr};
  if (int8) part.weight = {q.data(), DType::kI8, static_cast<uint32_t>(out), static_cast<uint32_t>(in), scales.data()};
  part.bias = {b.data(), DType::kF32, 1, static_cast<uint32_t>(out), nullptr};
  std::vector<int8_t> scratch_q(rows * in);
  std::vector<float> scratch_scale(rows);
  const Int8Scratch scratch{scratch_q.data(), scratch_scale.data(), rows, in};
  FcParams params;
  params.int8_scratch = &scratch;
  Result<FullyConnected> fc = FullyConnected::Create(&part, 1, params, "bench fc");
  if (!fc.ok()) Die(fc.status().ToString());
  Result<ThreadPool> pool = ThreadPool::Create(threads);
  if (!pool.ok()) Die(pool.status().ToString());
  const std::vector<float> x = RandomFloats(rows * in, 3, 1.0f);
  std::vector<float> y(rows * out);
  for (auto _ : state) {
    if (!fc->Run(rows, x.data(), y.data(), pool->get()).ok()) Die("fc run failed");
    benchmark::DoNotOptimize(y.data());
  }
  const double macs = static_cast<double>(rows * in * out);
  const double weight_bytes = static_cast<double>(in * out * (int8 ? 1 : sizeof(float)));
  state.counters["GFLOPS"] = benchmark::Counter(2 * macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["weight_bytes"] = weight_bytes;
  state.counters["GBps_weights"] = benchmark::Counter(weight_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// queries x keys attention over `heads` heads of head_dim values, rows holding all heads side
// by side (the encoder layout).
void BM_Attention(benchmark::State& state, size_t heads, size_t head_dim, size_t queries, size_t keys) {
  const size_t inner = heads * head_dim;
  const std::vector<float> q = RandomFloats(queries * inner, 1, 1.0f);
  const std::vector<float> kv = RandomFloats(keys * inner, 2, 1.0f);
  std::vector<float> out(queries * inner), scores(keys);
  const kernels::AttentionShape shape{heads, head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim)), head_dim};
  for (auto _ : state) {
    kernels::Attention(q.data(), inner, queries, kv.data(), inner, kv.data(), inner, keys, shape,
                       out.data(), inner, scores.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["heads"] = static_cast<double>(heads);
  state.counters["GFLOPS"] = benchmark::Counter(4.0 * static_cast<double>(queries * keys * inner) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AddLayerNorm(benchmark::State& state, size_t rows, size_t dim) {
  std::vector<float> x = RandomFloats(rows * dim, 1, 1.0f);
  const std::vector<float> r = RandomFloats(rows * dim, 2, 1.0f), g = RandomFloats(dim, 3, 1.0f),
                           b = RandomFloats(dim, 4, 0.1f);
  for (auto _ : state) {
    kernels::AddLayerNorm(x.data(), r.data(), dim, g.data(), b.data(), rows, dim, 1e-5f);
    benchmark::DoNotOptimize(x.data());
  }
  state.counters["values"] = benchmark::Counter(static_cast<double>(rows * dim), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Swish(benchmark::State& state, size_t n) {
  std::vector<float> x = RandomFloats(n, 1, 3.0f);
  for (auto _ : state) {
    kernels::SwishInPlace(x.data(), n);
    benchmark::DoNotOptimize(x.data());  // repeated swish stays finite (values shrink)
  }
}

}  // namespace

void RegisterOperatorBenchmarks(const BenchConfig& config) {
  std::vector<ModelSize> sizes = {config.smoke ? kTiny : kShipped};
  if (config.long_set) sizes.push_back(kBase);
  std::vector<size_t> row_counts = config.smoke ? std::vector<size_t>{1} : std::vector<size_t>{1, 20};
  if (config.long_set) row_counts.push_back(320);
  std::vector<int> thread_counts = {1};
  if (config.long_set) thread_counts.push_back(2);
  for (const ModelSize& z : sizes) {
    const size_t d = z.d_model, f = z.ffn, V = z.vocab;
    const struct { const char* name; size_t in, out; } shapes[] = {
        {"qkv", d, 3 * d}, {"out_proj", d, d}, {"cross_kv", d, 2 * d},
        {"fc1", d, f},     {"fc2", f, d},      {"lm_head", d, V}};
    for (bool int8 : {false, true}) {
      for (const auto& s : shapes) {
        for (size_t rows : row_counts) {
          for (int threads : thread_counts) {
            const std::string name = std::string("op/fc/") + z.name + (int8 ? "/int8/" : "/fp32/") +
                                     s.name + "/rows:" + std::to_string(rows) + "/threads:" +
                                     std::to_string(threads);
            auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_FullyConnected, s.in, s.out,
                                                   rows, threads, int8);
            if (threads > 1) b->UseRealTime();
            if (config.smoke) b->Iterations(10);
          }
        }
      }
    }
    const size_t hd = d / z.heads;
    for (size_t heads = 1; heads <= z.heads; heads *= 2) {
      const struct { const char* name; size_t queries, keys; } att[] = {
          {"encoder_self", 20, 20}, {"decoder_self_step32", 1, 32}, {"cross", 1, 20}};
      for (const auto& a : att) {
        const std::string name = std::string("op/attention/") + z.name + "/" + a.name +
                                 "/heads:" + std::to_string(heads);
        auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Attention, heads, hd, a.queries, a.keys);
        if (config.smoke) b->Iterations(10);
      }
    }
    for (size_t rows : row_counts) {
      const std::string name = std::string("op/layernorm/") + z.name + "/rows:" + std::to_string(rows);
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_AddLayerNorm, rows, d);
      if (config.smoke) b->Iterations(10);
    }
    const std::string name = std::string("op/swish/") + z.name + "/rows:20";
    auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Swish, 20 * f);
    if (config.smoke) b->Iterations(10);
  }
}

}  // namespace headwise::bench
