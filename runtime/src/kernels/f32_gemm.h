// runtime/src/kernels/f32_gemm.h: the fp32 product of activation rows with a weight matrix in
// the file's layout, F32 or F16, read in place (no packed copy):
//   y[r, o] = clamp(sum_k x[r, k] * w[o, k] + bias[o], min, max)
// F16 weights are widened exactly in registers, so an F16 matrix gives the floats its F32
// widening would. It lets a Translator run F32 and F16 models without holding a second copy of
// their weights (XNNPACK packs its own; an F16 matrix widened for it doubles in size).
//
// Families (one file each, f32_gemm_<family>.cc; F32Gemm runs the first this CPU has, read
// once from CPUID, kernels/cpu_x86.h):
//   avx512    x86 with AVX-512 F (and AVX2, FMA, F16C): two rows share a 16-lane register, so
//             one fused multiply-add does 8 lanes of two rows (f32_gemm_avx512.h).
//   avx2      x86 with AVX2, FMA and F16C: one 8-lane register per output (f32_gemm_avx2.h).
//   portable  F32GemmReference, everywhere else (callers keep XNNPACK there).
// HEADWISE_F32_GEMM_KERNEL=<name> picks an available family below the CPU's first choice (to
// compare families end to end); other names are ignored. Read once.
//
// Summation order (fixed and the same in every family, so a row's result depends neither on
// the other rows of the call, nor on the channel ranges or threads, nor on the vector width):
// per output, chunk m of 8 (m < k / 8) accumulates into one 8-lane vector with fused
// multiply-adds, the lanes are added as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), then
// the k % 8 tail in order (fused), then the bias. The reference does the same with std::fma, so
// every family gives identical floats.
#ifndef HEADWISE_RUNTIME_KERNELS_F32_GEMM_H_
#define HEADWISE_RUNTIME_KERNELS_F32_GEMM_H_

#include <cstddef>
#include <cstdint>

namespace headwise::kernels {

struct F32GemmArgs {
  const float* x = nullptr;  // row r at x + r * x_stride, k floats
  size_t x_stride = 0;
  size_t rows = 0;
  size_t k = 0;
  // [n, k] row-major: F32 when f16 is false, F16 bits when it is true.
  const void* w = nullptr;
  bool f16 = false;
  const float* bias = nullptr;  // [n]
  float* y = nullptr;           // row r at y + r * y_stride
  size_t y_stride = 0;
  float out_min = 0, out_max = 0;
};

// Output channels [begin, end) of every row. Different ranges may run on different threads.
// No heap allocation; a few tens of KB of stack.
void F32Gemm(const F32GemmArgs& a, size_t begin, size_t end);

// The portable loop in the same summation order (the tests compare every family with it).
void F32GemmReference(const F32GemmArgs& a, size_t begin, size_t end);

// True where a vector family runs on this CPU (x86 with AVX2, FMA and F16C at least; cached,
// thread-safe). Elsewhere F32Gemm runs the reference loop and callers keep XNNPACK.
bool HaveFastF32Gemm();

// "f32-gemm-avx512", "f32-gemm-avx2" or "f32-gemm-portable": what F32Gemm dispatches to.
const char* F32GemmKernelName();

// Output channels per block that a thread should take at a time so the block's weights stay in
// L2 while every row tile passes over them (a multiple of 24, at least 24).
size_t F32GemmBlockChannels(size_t k, bool f16);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_F32_GEMM_H_
