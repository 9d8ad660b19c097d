// fp32 matrix-product paths side by side on the same product, in turn within each iteration
// (load changes hit every path alike; ratios come from one run):
//   xnnpack   XNNPACK's f32 fully-connected, on its own packed copy of the F32 weights
//   gemm      kernels/f32_gemm.h on the F32 weights in place (the family F32Gemm dispatches to)
//   gemm_f16  kernels/f32_gemm.h on the same weights stored F16, in place (half the bytes)
//   gemm_avx2 the AVX2 family on the F32 weights, where it is not the dispatched one (the
//             kernel before the AVX-512 family, in the same run)
//   gemv      kernels/f32_gemv.h on the F32 weights in place (one row only)
// Counters: us_<path> (microseconds of this thread's CPU time per product), x_<path> (xnnpack's
// time over the path's: above 1 is faster than XNNPACK), macs; the label names the kernels.
// What it decides: which F32 / F16 products the runtime reads in place instead of packing
// (fc/fc_f32_gemm.cc), the packed copy being the second copy of the weights that issue 14
// asked to drop.
#include <xnnpack.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "common/half.h"
#include "kernels/f32_gemm.h"
#include "kernels/f32_gemm_kernel.h"
#include "kernels/f32_gemv.h"
#include "xnn_backend.h"

namespace headwise::bench {
namespace {

void BM_F32Paths(benchmark::State& state, size_t in, size_t out, size_t rows) {
  if (!InitXnnpack().ok()) Die("xnn_initialize failed");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(rows * in), w(out * in), bias(out);
  for (float& v : x) v = u(rng);
  for (float& v : w) v = 0.05f * u(rng);
  for (float& v : bias) v = 0.1f * u(rng);
  std::vector<uint16_t> w16(w.size());
  for (size_t i = 0; i < w.size(); ++i) w16[i] = FloatToF16(w[i]);
  const float lo = -std::numeric_limits<float>::infinity(), hi = -lo;

  xnn_operator_t op = nullptr;
  if (xnn_create_fully_connected_nc_f32(in, out, in, out, w.data(), bias.data(), lo, hi,
                                        XNN_FLAG_YIELD_WORKERS, &op) != xnn_status_success) {
    Die("xnn_create_fully_connected_nc_f32 failed");
  }
  XnnOperator owned(op);
  std::vector<float> y(rows * out);
  kernels::F32GemmArgs g{x.data(), in, rows, in, w.data(), false, bias.data(), y.data(), out, lo, hi};
  kernels::F32GemmArgs g16 = g;
  g16.w = w16.data();
  g16.f16 = true;
  const kernels::F32GemvArgs v{x.data(), in, w.data(), bias.data(), y.data(), lo, hi};

  // The AVX2 family, when it is available and not the one F32Gemm runs.
  void (*avx2)(const kernels::F32GemmArgs&, size_t, size_t) = nullptr;
  size_t families = 0;
  const kernels::F32GemmKernel* table = kernels::F32GemmKernels(&families);
  for (size_t i = 0; i < families; ++i) {
    if (std::string(table[i].name) == "avx2" && table[i].available() &&
        std::string(kernels::F32GemmKernelName()) != "f32-gemm-avx2") {
      avx2 = table[i].gemm;
    }
  }
  std::vector<std::string> names = {"xnnpack", "gemm", "gemm_f16"};
  if (avx2 != nullptr) names.push_back("gemm_avx2");
  if (rows == 1 && kernels::HaveFastF32Gemv()) names.push_back("gemv");
  const size_t paths = names.size();
  std::vector<double> seconds(paths, 0.0);
  for (auto _ : state) {
    for (size_t p = 0; p < paths; ++p) {
      const double t0 = ThreadCpuSeconds();
      const std::string& path = names[p];
      if (path == "xnnpack") {
        if (xnn_setup_fully_connected_nc_f32(op, rows, x.data(), y.data(), nullptr) != xnn_status_success ||
            xnn_run_operator(op, nullptr) != xnn_status_success) {
          Die("xnnpack run failed");
        }
      } else if (path == "gemm") {
        kernels::F32Gemm(g, 0, out);
      } else if (path == "gemm_f16") {
        kernels::F32Gemm(g16, 0, out);
      } else if (path == "gemm_avx2") {
        avx2(g, 0, out);
      } else {
        kernels::F32Gemv(v, 0, out);
      }
      benchmark::DoNotOptimize(y.data());
      seconds[p] += ThreadCpuSeconds() - t0;
    }
  }
  const double iterations = static_cast<double>(state.iterations());
  for (size_t p = 0; p < paths; ++p) {
    state.counters[std::string("us_") + names[p]] = seconds[p] / iterations * 1e6;
    state.counters[std::string("x_") + names[p]] = seconds[0] / seconds[p];
  }
  state.counters["macs"] = static_cast<double>(rows * in * out);
  state.SetLabel(std::string(kernels::F32GemmKernelName()) + ", " + kernels::F32GemvKernelName());
}

}  // namespace

void RegisterF32PathBenchmarks(const BenchConfig& config) {
  std::vector<ModelSize> sizes = {config.smoke ? kTiny : kShipped};
  if (config.long_set) sizes.push_back(kBase);
  // 1 row: a greedy decode step; 4: beam 4; 8: batch 8 greedy; 32: batch 8 x beam 4 or batch
  // 32 greedy; 20 and 320: one and 16 sentences' encoder.
  const std::vector<size_t> row_counts =
      config.smoke ? std::vector<size_t>{1, 5} : std::vector<size_t>{1, 4, 8, 20, 32, 320};
  for (const ModelSize& z : sizes) {
    const size_t d = z.d_model, f = z.ffn, V = z.vocab;
    const struct { const char* name; size_t in, out; } shapes[] = {
        {"qkv", d, 3 * d}, {"out_proj", d, d}, {"fc1", d, f}, {"fc2", f, d}, {"lm_head", d, V}};
    for (const auto& s : shapes) {
      for (size_t rows : row_counts) {
        if (s.out == V && rows > 32) continue;  // lm_head runs on decoder rows only
        const std::string name = std::string("op/f32_paths/") + z.name + "/" + s.name +
                                 "/rows:" + std::to_string(rows);
        auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_F32Paths, s.in, s.out, rows);
        if (config.smoke) b->Iterations(3);
      }
    }
  }
}

}  // namespace headwise::bench
