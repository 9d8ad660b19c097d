// runtime/src/kernels/int8_gemm_kernel.h: what the int8 kernel families (int8_gemm_<family>.cc)
// share with the reference loop, so that every family gives its exact results.
//
// Call these only from functions compiled for the build's baseline target (no
// __attribute__((target(...)))): a target with fused multiply-add (FMA on x86, VFPv4 on ARM)
// may contract Int8Finish's multiply and add differently from the reference loop, and the
// results would differ in the last bit. A family keeps its target-specific code in functions
// that produce int32 sums and finishes them here.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_KERNEL_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_KERNEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm.h"

namespace headwise::kernels {

// y[r, o] from the exact int32 sum of row r and output channel o.
inline float Int8Finish(const Int8GemmArgs& a, size_t r, size_t o, int32_t acc) {
  const float s = a.x_scale[r] * a.w_scale[o];
#if defined(__aarch64__)
  // One fused multiply-add (FMADD), what GCC contracts this to on aarch64 anyway, written out
  // so that the aarch64 families' vector finish (FMLA, int8_gemm_neon.h) matches it whatever
  // the contraction setting.
  const float v = __builtin_fmaf(static_cast<float>(acc), s, a.bias[o]);
#else
  const float v = static_cast<float>(acc) * s + a.bias[o];
#endif
  return std::min(a.out_max, std::max(a.out_min, v));
}

// sum_{i in [from, k)} x[i] * w[i], the tail a vector loop leaves.
inline int32_t Int8DotTail(const int8_t* x, const int8_t* w, size_t from, size_t k) {
  int32_t acc = 0;
  for (size_t i = from; i < k; ++i) acc += static_cast<int32_t>(x[i]) * w[i];
  return acc;
}

// y for rows [r0, r0 + nr) and output channels [o, o + no) from sums[r * no + j] over the
// first `vector_k` inputs; the inputs [vector_k, k) are added here.
inline void Int8FinishTile(const Int8GemmArgs& a, size_t r0, size_t nr, size_t o, size_t no,
                           const int32_t* sums, size_t vector_k) {
  for (size_t r = 0; r < nr; ++r) {
    const int8_t* x = a.xq + (r0 + r) * a.k;
    float* y = a.y + (r0 + r) * a.y_stride;
    for (size_t j = 0; j < no; ++j) {
      const int32_t tail = vector_k < a.k ? Int8DotTail(x, a.w + (o + j) * a.k, vector_k, a.k) : 0;
      y[o + j] = Int8Finish(a, r0 + r, o + j, sums[r * no + j] + tail);
    }
  }
}

// A family's vector code as tiles: fn(x, k, w, vector_k, sums) sets sums[r * N + j] to
// sum_{i < vector_k} x[r * k + i] * w[j * k + i] for the tile's R rows of x and N weight rows.
using Int8TileFn = void (*)(const int8_t* x, size_t k, const int8_t* w, size_t vector_k,
                            int32_t* sums);
// Finishes a tile of nr rows x 4 output channels as Int8FinishTile(a, r0, nr, o, 4, ...) does,
// bit for bit (a family's vector version of it).
using Int8Finish4Fn = void (*)(const Int8GemmArgs& a, size_t r0, size_t nr, size_t o,
                               const int32_t* sums, size_t vector_k);
struct Int8Tiles {
  size_t k_step = 16;      // vector_k = k rounded down to a multiple of this
  size_t wide_rows = 1;    // R of `wide` (at most 4); N is 4
  Int8TileFn wide = nullptr;  // [wide_rows x 4]
  Int8TileFn row4 = nullptr;  // [1 x 4]
  Int8TileFn row1 = nullptr;  // [1 x 1]
  Int8Finish4Fn finish4 = nullptr;  // null: Int8FinishTile
};

// Int8Gemm over [begin, end) with a family's tiles: output channels in blocks of 4 (the
// remainder one by one), rows in groups of wide_rows (the remainder one by one), each tile's
// sums finished with the reference's scalar code.
inline void Int8RunTiles(const Int8Tiles& t, const Int8GemmArgs& a, size_t begin, size_t end) {
  const size_t k = a.k, vector_k = k / t.k_step * t.k_step;
  int32_t sums[16];
  size_t o = begin;
  for (; o + 4 <= end; o += 4) {
    const int8_t* w = a.w + o * k;
    size_t r = 0;
    for (; r + t.wide_rows <= a.rows; r += t.wide_rows) {
      t.wide(a.xq + r * k, k, w, vector_k, sums);
      if (t.finish4 != nullptr) {
        t.finish4(a, r, t.wide_rows, o, sums, vector_k);
      } else {
        Int8FinishTile(a, r, t.wide_rows, o, 4, sums, vector_k);
      }
    }
    for (; r < a.rows; ++r) {
      t.row4(a.xq + r * k, k, w, vector_k, sums);
      if (t.finish4 != nullptr) {
        t.finish4(a, r, 1, o, sums, vector_k);
      } else {
        Int8FinishTile(a, r, 1, o, 4, sums, vector_k);
      }
    }
  }
  for (; o < end; ++o) {
    for (size_t r = 0; r < a.rows; ++r) {
      t.row1(a.xq + r * k, k, a.w + o * k, vector_k, sums);
      Int8FinishTile(a, r, 1, o, 1, sums, vector_k);
    }
  }
}

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_KERNEL_H_
