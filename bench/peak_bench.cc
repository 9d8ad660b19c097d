// The core's arithmetic peak, measured, so that kernel results can be stated as a share of it.
//   op/peak/fp32_fma   (x86 with AVX-512F) 12 independent chains of 512-bit fused multiply-adds:
//                      counters GFLOPS (2 per lane per instruction) and Ginstr_per_s
//   op/peak/int8_vnni  (x86 with AVX-512 VNNI) the same with vpdpbusd: GMACs (64 unsigned x
//                      signed byte products per instruction) and Ginstr_per_s
// One thread, thread CPU time. On a CPU that executes 512-bit instructions as two 256-bit halves
// (AMD Zen 4) the rate is the same as with 256-bit registers; the counters report the rate
// whatever the width.
#include <string>

#include "bench/bench_util.h"
#include "kernels/cpu_x86.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace headwise::bench {
namespace {

constexpr long kRounds = 1 << 20;  // of 12 instructions each
constexpr int kChains = 12;        // more than FMA latency x throughput (4 x 2) on current cores

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float FmaRounds(long n) {
  __m512 a[kChains];
  for (int i = 0; i < kChains; ++i) a[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(1e-4f);
  for (long r = 0; r < n; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) a[i] = _mm512_fmadd_ps(a[i], b, c);
  }
  __m512 s = a[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, a[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

__attribute__((target("avx512f,avx512vnni"))) int VnniRounds(long n) {
  __m512i a[kChains];
  for (int i = 0; i < kChains; ++i) a[i] = _mm512_set1_epi32(i);
  const __m512i b = _mm512_set1_epi32(0x01010101), c = _mm512_set1_epi32(0x02020202);
  for (long r = 0; r < n; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) a[i] = _mm512_dpbusd_epi32(a[i], b, c);
  }
  __m512i s = a[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, a[i]);
  alignas(64) int lanes[16];
  _mm512_store_si512(lanes, s);
  int sum = 0;
  for (int v : lanes) sum += v;
  return sum;
}

// Runs `rounds` (FmaRounds or VnniRounds) per iteration where `available`; counters
// Ginstr_per_s and `counter` (= instructions x `per_instr` operations, per second, in G).
template <typename Result>
void BM_Peak(benchmark::State& state, bool available, const char* lacks, Result (*rounds)(long),
             const char* counter, double per_instr) {
  if (!available) {
    state.SkipWithError(lacks);
    return;
  }
  double seconds = 0;
  for (auto _ : state) {
    const double t0 = ThreadCpuSeconds();
    benchmark::DoNotOptimize(rounds(kRounds));
    seconds += ThreadCpuSeconds() - t0;
  }
  const double instr = static_cast<double>(kRounds) * kChains * static_cast<double>(state.iterations());
  state.counters["Ginstr_per_s"] = instr / seconds / 1e9;
  state.counters[counter] = instr * per_instr / seconds / 1e9;
}
#endif

}  // namespace

void RegisterPeakBenchmarks(const BenchConfig& config) {
#if defined(__x86_64__)
  const kernels::X86Features& cpu = kernels::CpuX86();
  auto* f = benchmark::RegisterBenchmark("op/peak/fp32_fma", BM_Peak<float>, cpu.avx512f,
                                         "this CPU lacks AVX-512F", FmaRounds, "GFLOPS", 32.0);
  auto* v = benchmark::RegisterBenchmark("op/peak/int8_vnni", BM_Peak<int>, cpu.avx512_vnni,
                                         "this CPU lacks AVX-512 VNNI", VnniRounds, "GMACs", 64.0);
  if (config.smoke) {
    f->Iterations(1);
    v->Iterations(1);
  }
#else
  (void)config;
#endif
}

}  // namespace headwise::bench
