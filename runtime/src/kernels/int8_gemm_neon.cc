// The aarch64 NEON int8 family without the dot-product extension, and the NEON quantizer
// (int8_gemm_neon.h). NEON is in the ARMv8-A baseline: no target attributes here.
#include "kernels/int8_gemm_neon.h"

#ifdef HEADWISE_INT8_NEON
#include <arm_neon.h>

#include <algorithm>
#include <cmath>

#include "kernels/int8_gemm_kernel.h"

namespace headwise::kernels {
namespace {

// x . w over 16 inputs as four int32 lanes added to acc: products of the low and the high 8
// bytes paired in int16 lanes, then pairs of int16 lanes added into int32.
inline int32x4_t Dot16(int32x4_t acc, int8x16_t x, int8x16_t w) {
  int16x8_t p = vmull_s8(vget_low_s8(x), vget_low_s8(w));
  p = vmlal_high_s8(p, x, w);
  return vpadalq_s16(acc, p);
}

// R rows x N output channels; sums[r * N + j] (Int8TileFn).
template <int R, int N>
void Tile(const int8_t* x, size_t k, const int8_t* w, size_t vector_k, int32_t* sums) {
  int32x4_t acc[R][N];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < N; ++j) acc[r][j] = vdupq_n_s32(0);
  }
  for (size_t i = 0; i < vector_k; i += 16) {
    int8x16_t wv[N];
#pragma GCC unroll 4
    for (int j = 0; j < N; ++j) wv[j] = vld1q_s8(w + j * k + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const int8x16_t xv = vld1q_s8(x + r * k + i);
#pragma GCC unroll 4
      for (int j = 0; j < N; ++j) acc[r][j] = Dot16(acc[r][j], xv, wv[j]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    if constexpr (N == 4) {
      vst1q_s32(sums + r * 4, vpaddq_s32(vpaddq_s32(acc[r][0], acc[r][1]),
                                         vpaddq_s32(acc[r][2], acc[r][3])));
    } else {
#pragma GCC unroll 4
      for (int j = 0; j < N; ++j) sums[r * N + j] = vaddvq_s32(acc[r][j]);
    }
  }
}

float QuantizeRow(const float* row, size_t cols, int8_t* out) {
  float32x4_t m0 = vdupq_n_f32(0.0f), m1 = m0, m2 = m0, m3 = m0;
  size_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    m0 = vmaxq_f32(m0, vabsq_f32(vld1q_f32(row + c)));
    m1 = vmaxq_f32(m1, vabsq_f32(vld1q_f32(row + c + 4)));
    m2 = vmaxq_f32(m2, vabsq_f32(vld1q_f32(row + c + 8)));
    m3 = vmaxq_f32(m3, vabsq_f32(vld1q_f32(row + c + 12)));
  }
  // The maximum of finite values is exact in any order.
  float max_abs = vmaxvq_f32(vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3)));
  for (; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
  if (!(max_abs > 0.0f)) {
    std::fill(out, out + cols, int8_t{0});
    return 0.0f;
  }
  const float inv = 127.0f / max_abs;
  const float32x4_t vinv = vdupq_n_f32(inv), hi = vdupq_n_f32(127.0f), lo = vdupq_n_f32(-127.0f);
  c = 0;
  for (; c + 16 <= cols; c += 16) {
    int32x4_t q[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const float32x4_t v = vmulq_f32(vld1q_f32(row + c + 4 * j), vinv);
      q[j] = vcvtnq_s32_f32(vminq_f32(hi, vmaxq_f32(lo, v)));
    }
    const int16x8_t q01 = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
    const int16x8_t q23 = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
    vst1q_s8(out + c, vcombine_s8(vmovn_s16(q01), vmovn_s16(q23)));
  }
  for (; c < cols; ++c) {
    out[c] = static_cast<int8_t>(std::lrintf(std::min(127.0f, std::max(-127.0f, row[c] * inv))));
  }
  return max_abs / 127.0f;
}

}  // namespace

void Int8FinishTileNeon(const Int8GemmArgs& a, size_t r0, size_t nr, size_t o, const int32_t* sums,
                        size_t vector_k) {
  const float32x4_t w_scale = vld1q_f32(a.w_scale + o), bias = vld1q_f32(a.bias + o);
  const float32x4_t lo = vdupq_n_f32(a.out_min), hi = vdupq_n_f32(a.out_max);
  for (size_t r = 0; r < nr; ++r) {
    int32x4_t acc = vld1q_s32(sums + 4 * r);
    if (vector_k < a.k) {
      const int8_t* x = a.xq + (r0 + r) * a.k;
      int32_t tail[4];
      for (size_t j = 0; j < 4; ++j) tail[j] = Int8DotTail(x, a.w + (o + j) * a.k, vector_k, a.k);
      acc = vaddq_s32(acc, vld1q_s32(tail));
    }
    const float32x4_t s = vmulq_f32(vdupq_n_f32(a.x_scale[r0 + r]), w_scale);
    const float32x4_t v = vfmaq_f32(bias, vcvtq_f32_s32(acc), s);
    // std::max(lo, v) = lo < v ? v : lo; std::min(hi, m) = m < hi ? m : hi (NaN and signed
    // zeros included).
    const float32x4_t m = vbslq_f32(vcltq_f32(lo, v), v, lo);
    vst1q_f32(a.y + (r0 + r) * a.y_stride + o, vbslq_f32(vcltq_f32(m, hi), m, hi));
  }
}

void Int8GemmNeon(const Int8GemmArgs& a, size_t begin, size_t end) {
  Int8Tiles t;
  t.k_step = 16;
  t.wide_rows = 4;
  t.wide = Tile<4, 4>;
  t.row4 = Tile<1, 4>;
  t.row1 = Tile<1, 1>;
  t.finish4 = Int8FinishTileNeon;
  Int8RunTiles(t, a, begin, end);
}

void QuantizeRowsNeon(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                      float* scale) {
  for (size_t r = 0; r < rows; ++r) scale[r] = QuantizeRow(x + r * x_stride, cols, q + r * cols);
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_NEON
