// runtime/src/kernels/int8_gemm.h: the int8 fully-connected product of `--weights int8` models,
// with activations quantized dynamically (per row, at run time) rather than with calibrated
// fixed scales:
//   xq[r, :] = round(x[r, :] / sx[r]),  sx[r] = max_k |x[r, k]| / 127   (symmetric, [-127, 127])
//   y[r, o]  = clamp(sx[r] * sw[o] * sum_k xq[r, k] * w[o, k] + bias[o], min, max)
// w is [out, k] int8 row-major in [-127, 127] with one scale sw[o] per output channel (the file's
// I8 layout, read in place). Sums are exact in int32 (k < 2^17). On x86 with AVX2 the product
// runs 32 multiply-adds per instruction pair (sign trick: |x| * sign(w, x) as u8 x s8, no
// saturation since 127 * 127 * 2 < 2^15); elsewhere a portable loop gives the same integers.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_H_

#include <cstddef>
#include <cstdint>

namespace headwise::kernels {

// Quantizes `rows` rows of `cols` floats (rows `x_stride` floats apart) into q ([rows, cols],
// dense) and scale[rows]. An all-zero row gets scale 0 and zeros.
void QuantizeRowsDynamic(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                         float* scale);
// The portable loop; QuantizeRowsDynamic gives the same bytes on every path for finite x.
void QuantizeRowsReference(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                           float* scale);

struct Int8GemmArgs {
  const int8_t* xq = nullptr;      // [rows, k]
  const float* x_scale = nullptr;  // [rows]
  size_t rows = 0;
  size_t k = 0;
  const int8_t* w = nullptr;       // [out, k]
  const float* w_scale = nullptr;  // [out]
  const float* bias = nullptr;     // [out]
  float* y = nullptr;              // row r at y + r * y_stride
  size_t y_stride = 0;
  float out_min = 0, out_max = 0;
};

// Output channels [begin, end) of every row. Different ranges may run on different threads.
void Int8Gemm(const Int8GemmArgs& a, size_t begin, size_t end);

// The portable loop (also what the tests compare the dispatched kernel with).
void Int8GemmReference(const Int8GemmArgs& a, size_t begin, size_t end);

// "avx2" or "portable": the kernel Int8Gemm dispatches to on this CPU.
const char* Int8GemmKernelName();

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_H_
