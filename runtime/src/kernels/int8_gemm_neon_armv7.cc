// The 32-bit ARM NEON int8 family (int8_gemm_neon_armv7.h). Only the functions marked
// HEADWISE_NEON are compiled for NEON, so no inline function of this file (or of a header it
// includes) can carry NEON instructions into code that runs on a CPU without it.
#include "kernels/int8_gemm_neon_armv7.h"

#ifdef HEADWISE_INT8_NEON_ARMV7
#include <arm_neon.h>
#include <cpuinfo.h>

#include <algorithm>
#include <cmath>

#include "kernels/int8_gemm_kernel.h"

#define HEADWISE_NEON __attribute__((target("fpu=neon")))

namespace headwise::kernels {
namespace {

HEADWISE_NEON inline int32x4_t Dot16(int32x4_t acc, int8x16_t x, int8x16_t w) {
  int16x8_t p = vmull_s8(vget_low_s8(x), vget_low_s8(w));
  p = vmlal_s8(p, vget_high_s8(x), vget_high_s8(w));
  return vpadalq_s16(acc, p);
}

// [sum(a), sum(b)]
HEADWISE_NEON inline int32x2_t Sum2(int32x4_t a, int32x4_t b) {
  return vpadd_s32(vadd_s32(vget_low_s32(a), vget_high_s32(a)),
                   vadd_s32(vget_low_s32(b), vget_high_s32(b)));
}

// R rows x N output channels; sums[r * N + j] (Int8TileFn).
template <int R, int N>
HEADWISE_NEON void Tile(const int8_t* x, size_t k, const int8_t* w, size_t vector_k,
                        int32_t* sums) {
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
      vst1q_s32(sums + r * 4, vcombine_s32(Sum2(acc[r][0], acc[r][1]), Sum2(acc[r][2], acc[r][3])));
    } else {
#pragma GCC unroll 4
      for (int j = 0; j < N; ++j) sums[r * N + j] = vget_lane_s32(Sum2(acc[r][j], acc[r][j]), 0);
    }
  }
}

// The largest |row[c]| over the first cols16 (a multiple of 16) columns, subnormals as zero.
HEADWISE_NEON float MaxAbs16(const float* row, size_t cols16) {
  float32x4_t m0 = vdupq_n_f32(0.0f), m1 = m0, m2 = m0, m3 = m0;
  for (size_t c = 0; c < cols16; c += 16) {
    m0 = vmaxq_f32(m0, vabsq_f32(vld1q_f32(row + c)));
    m1 = vmaxq_f32(m1, vabsq_f32(vld1q_f32(row + c + 4)));
    m2 = vmaxq_f32(m2, vabsq_f32(vld1q_f32(row + c + 8)));
    m3 = vmaxq_f32(m3, vabsq_f32(vld1q_f32(row + c + 12)));
  }
  const float32x4_t m = vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3));
  float32x2_t h = vpmax_f32(vget_low_f32(m), vget_high_f32(m));
  h = vpmax_f32(h, h);
  return vget_lane_f32(h, 0);
}

// out[c] = round-half-even(clamp(row[c] * inv, -127, 127)) for the first cols16 columns.
HEADWISE_NEON void Round16(const float* row, size_t cols16, float inv, int8_t* out) {
  const float32x4_t vinv = vdupq_n_f32(inv), hi = vdupq_n_f32(127.0f), lo = vdupq_n_f32(-127.0f);
  // 1.5 * 2^23: v + magic has an ulp of 1, so the addition rounds v to an integer (ties to even)
  // and the low bits of the sum are that integer plus 0x400000.
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  const int32x4_t magic_bits = vreinterpretq_s32_f32(magic);
  for (size_t c = 0; c < cols16; c += 16) {
    int32x4_t q[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const float32x4_t v = vminq_f32(hi, vmaxq_f32(lo, vmulq_f32(vld1q_f32(row + c + 4 * j), vinv)));
      q[j] = vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(v, magic)), magic_bits);
    }
    const int16x8_t q01 = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
    const int16x8_t q23 = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
    vst1q_s8(out + c, vcombine_s8(vmovn_s16(q01), vmovn_s16(q23)));
  }
}

// Below this largest |x| a row goes to the reference loop (see the header).
constexpr float kSmallestVectorMax = 0x1p-100f;

}  // namespace

bool Int8NeonArmv7Available() {
  static const bool have = cpuinfo_initialize() && cpuinfo_has_arm_neon();
  return have;
}

void Int8GemmNeonArmv7(const Int8GemmArgs& a, size_t begin, size_t end) {
  Int8Tiles t;
  t.k_step = 16;
  t.wide_rows = 2;
  t.wide = Tile<2, 4>;
  t.row4 = Tile<1, 4>;
  t.row1 = Tile<1, 1>;
  Int8RunTiles(t, a, begin, end);
}

void QuantizeRowsNeonArmv7(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                           float* scale) {
  const size_t cols16 = cols / 16 * 16;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x + r * x_stride;
    int8_t* out = q + r * cols;
    float max_abs = MaxAbs16(row, cols16);
    for (size_t c = cols16; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
    if (!(max_abs >= kSmallestVectorMax)) {
      QuantizeRowsReference(row, 1, cols, cols, out, scale + r);
      continue;
    }
    const float inv = 127.0f / max_abs;
    Round16(row, cols16, inv, out);
    for (size_t c = cols16; c < cols; ++c) {
      out[c] = static_cast<int8_t>(std::lrintf(std::min(127.0f, std::max(-127.0f, row[c] * inv))));
    }
    scale[r] = max_abs / 127.0f;
  }
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_NEON_ARMV7
