// runtime/src/kernels/int8_gemm.h: the int8 fully-connected product of `--weights int8` models,
// with activations quantized dynamically (per row, at run time) rather than with calibrated
// fixed scales:
//   xq[r, :] = round(x[r, :] / sx[r]),  sx[r] = max_k |x[r, k]| / 127   (symmetric, [-127, 127])
//   y[r, o]  = clamp(sx[r] * sw[o] * sum_k xq[r, k] * w[o, k] + bias[o], min, max)
// w is [out, k] int8 row-major in [-127, 127] with one scale sw[o] per output channel (the file's
// I8 layout, read in place). Sums are exact in int32 (k < 2^17).
//
// Kernel families, one file each (int8_gemm_<family>.cc), chosen once per process from the CPU
// (Int8Kernels(): the first available entry wins; the environment variable
// HEADWISE_INT8_KERNEL=<name> picks another family this CPU runs, e.g. to compare families end
// to end; an unknown or unavailable name is ignored):
//   amx           x86 with AMX-INT8 granted by the OS: tile products (tdpbssd) for 8+ rows,
//                 the avx512-vnni tiles for fewer rows and for channel remainders
//   avx512-vnni   x86 with AVX-512 VNNI: vpdpbusd on 64 bytes, tiles of 4 rows x 4 channels
//   avx-vnni      x86 with AVX-VNNI (no AVX-512): vpdpbusd on 32 bytes, tiles of 2 x 4
//   avx2          x86 with AVX2: 32 multiply-adds per instruction pair (|x| * sign(w, x) as
//                 u8 x s8; no saturation since 127 * 127 * 2 < 2^15)
//   neon-dotprod  aarch64 with the dot-product extension (SDOT; Cortex-A55/A76, Raspberry Pi 5)
//   neon          aarch64 without it (Cortex-A53/A72, Raspberry Pi 3/4): SMULL/SMLAL/SADALP
//   neon-armv7    32-bit ARM with NEON (armhf; cpuinfo_has_arm_neon() decides at run time)
//   portable      the reference loops below, everywhere else
// Every family gives the reference loop's exact int32 sums and finishes them with the
// reference's operations (int8_gemm_kernel.h), so y is bit-identical to Int8GemmReference on
// every path and for every split of [begin, end) (thread count); QuantizeRowsDynamic gives
// QuantizeRowsReference's bytes and scales for finite x (the x86 families share the AVX2
// quantizer).
// Where a Model maps its file, the avx512-vnni and avx2 families run on packed copies of the
// weights instead (kernels/int8_packed.h), with the same results.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_H_

#include <cstddef>
#include <cstdint>

namespace headwise::kernels {

// Quantizes `rows` rows of `cols` floats (rows `x_stride` floats apart) into q ([rows, cols],
// dense) and scale[rows]. An all-zero row gets scale 0 and zeros.
void QuantizeRowsDynamic(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                         float* scale);
// The portable loop.
void QuantizeRowsReference(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                           float* scale);

struct Int8GemmArgs {
  const int8_t* xq = nullptr;      // [rows, k], values in [-127, 127]
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

// The portable loop (also what the tests compare every kernel with).
void Int8GemmReference(const Int8GemmArgs& a, size_t begin, size_t end);

// The name of the family Int8Gemm and QuantizeRowsDynamic dispatch to on this CPU, e.g.
// "neon-dotprod" (a static string).
const char* Int8GemmKernelName();

// One kernel family compiled into this build.
struct Int8Kernel {
  const char* name;
  bool (*available)();  // whether this CPU can run it (cpuinfo; cached, thread-safe)
  void (*gemm)(const Int8GemmArgs& a, size_t begin, size_t end);
  void (*quantize)(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                   float* scale);
};

// Every family compiled into this build for this architecture, most preferred first; the last
// is always "portable" (the reference loops). *count receives the number of entries. For tests
// and benchmarks, which run each available family against the reference.
const Int8Kernel* Int8Kernels(size_t* count);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_H_
