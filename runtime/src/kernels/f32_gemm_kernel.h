// runtime/src/kernels/f32_gemm_kernel.h: what the fp32 gemm families (f32_gemm_<family>.cc)
// share with the reference loop, so that every family gives its exact floats (the summation
// order of f32_gemm.h): the weight read, the k % 8 tail and the finish.
//
// Safe to call from functions compiled for any target: nothing here multiplies and adds in
// one expression that a compiler could contract differently (the tail is an explicit fused
// multiply-add, the finish only adds and clamps).
#ifndef HEADWISE_RUNTIME_KERNELS_F32_GEMM_KERNEL_H_
#define HEADWISE_RUNTIME_KERNELS_F32_GEMM_KERNEL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "common/half.h"
#include "kernels/f32_gemm.h"

namespace headwise::kernels {

// y[r, o] from the sum of output o (lanes and tail): clamp(sum + bias[o], min, max). A vector
// finish matches it as max(v, lo) then min(., hi) (vmaxps / vminps return their second operand
// for equal or NaN inputs, as std::max(lo, v) / std::min(hi, v) return lo / hi).
inline float F32Finish(const F32GemmArgs& a, size_t o, float sum) {
  return std::min(a.out_max, std::max(a.out_min, sum + a.bias[o]));
}

// w[o, i] as a float (F16 widened exactly).
inline float F32WeightAt(const F32GemmArgs& a, size_t o, size_t i) {
  const size_t at = o * a.k + i;
  return a.f16 ? F16ToFloat(static_cast<const uint16_t*>(a.w)[at])
               : static_cast<const float*>(a.w)[at];
}

// The k % 8 tail of one output, in order, after its lane sum s (x is the output's row).
inline float F32TailSum(const F32GemmArgs& a, const float* x, size_t o, size_t from, float s) {
  for (size_t i = from; i < a.k; ++i) s = std::fma(x[i], F32WeightAt(a, o, i), s);
  return s;
}

// The eight lane sums of one output added in the header's tree.
inline float F32ReduceLanes(const float* l) {
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

// One family: its name (for HEADWISE_F32_GEMM_KERNEL and "f32-gemm-<name>"), whether this CPU
// runs it, and its F32Gemm.
struct F32GemmKernel {
  const char* name;
  bool (*available)();
  void (*gemm)(const F32GemmArgs& a, size_t begin, size_t end);
};

// Every family compiled in, most preferred first, the portable loop last (tests run each
// available one against the reference).
const F32GemmKernel* F32GemmKernels(size_t* count);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_F32_GEMM_KERNEL_H_
