// runtime/src/kernels/f32_gemv.h: the fp32 product of one activation row with a weight matrix
// stored row-major [n, k] (the file's F32 layout, read in place):
//   y[o] = clamp(sum_k x[k] * w[o, k] + bias[o], min, max)
// It serves batch-1 decoding, where XNNPACK's F32 GEMM runs its 1 x 16 tile with two FMA chains
// per k (bound by FMA latency, about a third of what the core can issue). Here eight output
// channels are summed at a time, one accumulator each (eight independent chains), in one
// sequential pass over their eight contiguous weight rows.
//
// Summation order: that of kernels/f32_gemm.h, so that a row's result is the same floats
// whether it is computed alone (this kernel) or among other rows (the several-row kernels):
// per output, chunk m of 8 floats (m < k / 8) accumulates into one 8-lane vector with fused
// multiply-adds, the 8 lanes are added as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)),
// then the k % 8 tail in order (fused), then the bias. So a sentence's translation does not
// depend on how many other sentences are still being decoded beside it (batching, batch lanes).
// The reference does the same with std::fma, so both give identical floats.
#ifndef HEADWISE_RUNTIME_KERNELS_F32_GEMV_H_
#define HEADWISE_RUNTIME_KERNELS_F32_GEMV_H_

#include <cstddef>

namespace headwise::kernels {

struct F32GemvArgs {
  const float* x = nullptr;     // [k]
  size_t k = 0;
  const float* w = nullptr;     // [n, k]
  const float* bias = nullptr;  // [n]
  float* y = nullptr;           // [n]
  float out_min = 0, out_max = 0;
};

// Output channels [begin, end). Different ranges may run on different threads.
void F32Gemv(const F32GemvArgs& a, size_t begin, size_t end);

// The portable loop in the same summation order (the tests compare the dispatched kernel with it).
void F32GemvReference(const F32GemvArgs& a, size_t begin, size_t end);

// True where F32Gemv has a vector kernel (x86 with AVX2 + FMA). Elsewhere callers keep
// XNNPACK's own kernels (NEON on Arm), which are faster than the portable loop.
bool HaveFastF32Gemv();

// "f32-gemv-avx2" or "f32-gemv-portable": the kernel F32Gemv dispatches to on this CPU.
const char* F32GemvKernelName();

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_F32_GEMV_H_
