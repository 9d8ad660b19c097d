// int8 kernel families side by side (runtime/src/kernels/int8_gemm.h): every family this CPU can
// run, portable loop included, on the same quantize + product in turn within each iteration,
// so load changes hit every family alike and the ratios come from one run. For a Raspberry Pi:
//   headwise_bench --benchmark_filter=op/int8_families --benchmark_format=json
// Counters: us_<family> (microseconds of this thread's CPU time per quantize + product),
// x_<family> (the portable loop's time over the family's), same_<family> (1 if its output was
// bit-identical to the portable loop's in the last iteration; the tests check this, the bench
// only reports it), macs; the label names the family Int8Gemm dispatches to.
// op/int8_layouts (x86 where the dispatched family packs: avx512-vnni, avx2): that family on the
// file's row-major weights against its kernel on the packed layout (kernels/int8_packed.h, what
// the int8 operators run on this CPU), in turn within each iteration: us_row_major, us_packed,
// x_packed (row-major time over packed), same (bit-identical); the label names both.
// op/int8_step/SIZE/rows:R (the same CPUs): every matrix one decode step of the SIZE
// model reads (per decoder layer self-attention qkv and out, cross-attention q and out, fc1,
// fc2; then lm_head), packed, R rows through all of them: us (this thread's CPU time per
// step), weight_GBps (packed bytes read per second), weight_MB. The shipped size's 4.8 MB stay
// in a last-level cache of this machine's size, the base size's 38 MB come from memory
// (model/decode_bandwidth puts a whole step beside a plain streaming read).
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "kernels/int8_gemm.h"
#include "kernels/int8_packed.h"

namespace headwise::bench {
namespace {

// One product's operands, the same random draws for every benchmark of a shape.
struct Operands {
  std::vector<float> x, w_scale, bias, x_scale;
  std::vector<int8_t> w, xq;
  Operands(size_t in, size_t out, size_t rows)
      : x(rows * in), w_scale(out), bias(out), x_scale(rows), w(out * in), xq(rows * in) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::uniform_int_distribution<int> q(-127, 127);
    for (float& v : x) v = u(rng);
    for (int8_t& v : w) v = static_cast<int8_t>(q(rng));
    for (float& v : w_scale) v = 0.01f * (1.5f + u(rng));
    for (float& v : bias) v = 0.1f * u(rng);
  }
  kernels::Int8GemmArgs Args(size_t in, size_t out, size_t rows) {
    return kernels::Int8GemmArgs{xq.data(), x_scale.data(), rows, in, w.data(), w_scale.data(),
                                 bias.data(), nullptr, out, -1e30f, 1e30f};
  }
};

void BM_Int8Families(benchmark::State& state, size_t in, size_t out, size_t rows) {
  Operands op(in, out, rows);
  size_t n = 0;
  const kernels::Int8Kernel* all = kernels::Int8Kernels(&n);
  std::vector<const kernels::Int8Kernel*> families;
  for (size_t i = 0; i < n; ++i) {
    if (all[i].available()) families.push_back(&all[i]);
  }
  std::vector<std::vector<float>> y(families.size(), std::vector<float>(rows * out));
  std::vector<double> seconds(families.size(), 0.0);
  kernels::Int8GemmArgs a = op.Args(in, out, rows);
  for (auto _ : state) {
    for (size_t f = 0; f < families.size(); ++f) {
      const double t0 = ThreadCpuSeconds();
      families[f]->quantize(op.x.data(), rows, in, in, op.xq.data(), op.x_scale.data());
      a.y = y[f].data();
      families[f]->gemm(a, 0, out);
      benchmark::DoNotOptimize(y[f].data());
      seconds[f] += ThreadCpuSeconds() - t0;
    }
  }
  const double iterations = static_cast<double>(state.iterations());
  const size_t portable = families.size() - 1;  // the table ends with the portable loop
  for (size_t f = 0; f < families.size(); ++f) {
    const std::string name = families[f]->name;
    state.counters["us_" + name] = seconds[f] / iterations * 1e6;
    state.counters["x_" + name] = seconds[portable] / seconds[f];
    state.counters["same_" + name] =
        std::memcmp(y[f].data(), y[portable].data(), y[f].size() * sizeof(float)) == 0 ? 1 : 0;
  }
  state.counters["macs"] = static_cast<double>(rows * in * out);
  state.SetLabel(std::string("dispatched: ") + kernels::Int8GemmKernelName());
}

void BM_Int8Layouts(benchmark::State& state, size_t in, size_t out, size_t rows) {
  const kernels::Int8PackedKernel& pk = kernels::Int8PackedKernelHere();
  if (pk.gemm == nullptr) {
    const std::string why = std::string("the int8 family here (") +
                            kernels::Int8GemmKernelName() + ") has no packed kernel";
    state.SkipWithError(why.c_str());
    return;
  }
  Operands op(in, out, rows);
  std::vector<uint8_t> packed(kernels::Int8VnniPackedBytes(out, in));
  kernels::PackInt8Vnni(op.w.data(), out, in, packed.data());
  kernels::QuantizeRowsDynamic(op.x.data(), rows, in, in, op.xq.data(), op.x_scale.data());
  std::vector<float> y_row(rows * out), y_packed(rows * out);
  kernels::Int8GemmArgs a = op.Args(in, out, rows);
  double row_s = 0, packed_s = 0;
  for (auto _ : state) {
    double t0 = ThreadCpuSeconds();
    a.y = y_row.data();
    kernels::Int8Gemm(a, 0, out);
    benchmark::DoNotOptimize(y_row.data());
    row_s += ThreadCpuSeconds() - t0;
    t0 = ThreadCpuSeconds();
    a.y = y_packed.data();
    pk.gemm(a, packed.data(), 0, out);
    benchmark::DoNotOptimize(y_packed.data());
    packed_s += ThreadCpuSeconds() - t0;
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["us_row_major"] = row_s / iterations * 1e6;
  state.counters["us_packed"] = packed_s / iterations * 1e6;
  state.counters["x_packed"] = row_s / packed_s;
  state.counters["same"] =
      std::memcmp(y_row.data(), y_packed.data(), y_row.size() * sizeof(float)) == 0 ? 1 : 0;
  state.counters["macs"] = static_cast<double>(rows * in * out);
  state.SetLabel(std::string(kernels::Int8GemmKernelName()) + " vs " + pk.name);
}

void BM_Int8Step(benchmark::State& state, ModelSize z, size_t rows) {
  const kernels::Int8PackedKernel& pk = kernels::Int8PackedKernelHere();
  if (pk.gemm == nullptr) {
    const std::string why = std::string("the int8 family here (") +
                            kernels::Int8GemmKernelName() + ") has no packed kernel";
    state.SkipWithError(why.c_str());
    return;
  }
  const size_t d = z.d_model, f = z.ffn;
  std::vector<std::pair<size_t, size_t>> shapes;  // (in, out)
  for (uint32_t l = 0; l < z.decoder_layers; ++l) {
    shapes.insert(shapes.end(), {{d, 3 * d}, {d, d}, {d, d}, {d, d}, {d, f}, {f, d}});
  }
  shapes.emplace_back(d, z.vocab);
  struct Packed {
    size_t in, out;
    Operands op;
    std::vector<uint8_t> w;
  };
  std::vector<Packed> mats;
  size_t bytes = 0;
  for (const auto& [in, out] : shapes) {
    Packed p{in, out, Operands(in, out, rows), std::vector<uint8_t>(kernels::Int8VnniPackedBytes(out, in))};
    kernels::PackInt8Vnni(p.op.w.data(), out, in, p.w.data());
    std::vector<int8_t>().swap(p.op.w);  // only the packed copy is read
    kernels::QuantizeRowsDynamic(p.op.x.data(), rows, in, in, p.op.xq.data(), p.op.x_scale.data());
    bytes += p.w.size();
    mats.push_back(std::move(p));
  }
  std::vector<float> y(rows * std::max(4 * d, static_cast<size_t>(z.vocab)));
  double seconds = 0;
  for (auto _ : state) {
    const double t0 = ThreadCpuSeconds();
    for (Packed& p : mats) {
      kernels::Int8GemmArgs a = p.op.Args(p.in, p.out, rows);
      a.y = y.data();
      pk.gemm(a, p.w.data(), 0, p.out);
    }
    benchmark::DoNotOptimize(y.data());
    seconds += ThreadCpuSeconds() - t0;
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["us"] = seconds / iterations * 1e6;
  state.counters["weight_GBps"] = static_cast<double>(bytes) * iterations / seconds / 1e9;
  state.counters["weight_MB"] = static_cast<double>(bytes) / 1e6;
  state.SetLabel(pk.name);
}

}  // namespace

void RegisterInt8KernelBenchmarks(const BenchConfig& config) {
  std::vector<ModelSize> sizes = {config.smoke ? kTiny : kShipped};
  if (config.long_set) sizes.push_back(kBase);
  // 1 row: a greedy decode step; 4: beam 4; 20: one sentence's encoder.
  const std::vector<size_t> row_counts = config.smoke ? std::vector<size_t>{1} : std::vector<size_t>{1, 4, 20};
  for (const ModelSize& z : sizes) {
    const size_t d = z.d_model, f = z.ffn, V = z.vocab;
    const struct { const char* name; size_t in, out; } shapes[] = {
        {"qkv", d, 3 * d}, {"fc1", d, f}, {"fc2", f, d}, {"lm_head", d, V}};
    for (const auto& s : shapes) {
      for (size_t rows : row_counts) {
        const std::string name = std::string("op/int8_families/") + z.name + "/" + s.name +
                                 "/rows:" + std::to_string(rows);
        auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Int8Families, s.in, s.out, rows);
        if (config.smoke) b->Iterations(3);
        // 32 rows: a batch of 32 decode steps.
        for (size_t r : rows == 20 ? std::vector<size_t>{20, 32} : std::vector<size_t>{rows}) {
          const std::string lname = std::string("op/int8_layouts/") + z.name + "/" + s.name +
                                    "/rows:" + std::to_string(r);
          auto* lb = benchmark::RegisterBenchmark(lname.c_str(), BM_Int8Layouts, s.in, s.out, r);
          if (config.smoke) lb->Iterations(3);
        }
      }
    }
    for (size_t rows : {1, 2, 4}) {
      const std::string name = std::string("op/int8_step/") + z.name + "/rows:" + std::to_string(rows);
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Int8Step, z, rows);
      if (config.smoke) b->Iterations(3);
    }
  }
}

}  // namespace headwise::bench
