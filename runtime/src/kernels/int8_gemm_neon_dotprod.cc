// The aarch64 SDOT int8 family (int8_gemm_neon_dotprod.h). SDOT sums four int8 products into
// each int32 lane, exactly (no intermediate narrowing), so the sums equal the reference loop's.
#include "kernels/int8_gemm_neon_dotprod.h"

#ifdef HEADWISE_INT8_NEON_DOTPROD
#include <arm_neon.h>
#include <cpuinfo.h>

#include "kernels/int8_gemm_kernel.h"
#include "kernels/int8_gemm_neon.h"

namespace headwise::kernels {
namespace {

// R rows x N output channels; sums[r * N + j] (Int8TileFn). acc[r][j] lane l holds the sum
// over inputs i = 16 m + 4 l .. 4 l + 3 of every step m.
template <int R, int N>
__attribute__((target("arch=armv8.2-a+dotprod"))) void Tile(const int8_t* x, size_t k,
                                                             const int8_t* w, size_t vector_k,
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
      for (int j = 0; j < N; ++j) acc[r][j] = vdotq_s32(acc[r][j], xv, wv[j]);
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

}  // namespace

bool Int8NeonDotprodAvailable() {
  static const bool have = cpuinfo_initialize() && cpuinfo_has_arm_neon_dot();
  return have;
}

void Int8GemmNeonDotprod(const Int8GemmArgs& a, size_t begin, size_t end) {
  Int8Tiles t;
  t.k_step = 16;
  t.wide_rows = 4;
  t.wide = Tile<4, 4>;
  t.row4 = Tile<1, 4>;
  t.row1 = Tile<1, 1>;
  t.finish4 = Int8FinishTileNeon;
  Int8RunTiles(t, a, begin, end);
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_NEON_DOTPROD
