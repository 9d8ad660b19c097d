#include "kernels/int8_gemm_amx.h"

#ifdef HEADWISE_INT8_AMX

#include "kernels/x86_intrinsics.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu_x86.h"
#include "kernels/int8_gemm_avx512vnni.h"

#define HEADWISE_TARGET_AMX \
  __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace headwise::kernels {
namespace {

constexpr size_t kPackedBytes = 16 * kAmxMaxK;  // one block of 16 rows at the widest k (32 KiB)

// Palette 1; tiles 0-3 the sums (16 channels x 16 rows of int32), 4-5 weights (16 channels x
// 64 bytes), 6-7 packed rows of x (16 groups of 4 bytes x 16 rows).
struct alignas(64) TileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Rows [0, n) of x into B-tile order: block b (64 inputs) of 16-row group q is 1 KiB at
// xp + q * 16 * kp + b * 1024, its row g (inputs 64 b + 4 g .. + 3) holding 4 bytes of each of
// the 16 rows. Inputs past k and rows past n are zero.
void PackRows(const int8_t* x, size_t n, size_t k, size_t kp, int8_t* xp) {
  std::memset(xp, 0, (n + 15) / 16 * 16 * kp);
  for (size_t r = 0; r < n; ++r) {
    const int8_t* row = x + r * k;
    int8_t* base = xp + (r / 16) * 16 * kp + (r % 16) * 4;
    size_t g = 0;
    for (; 4 * g + 4 <= k; ++g) std::memcpy(base + g * 64, row + 4 * g, 4);
    for (size_t i = 4 * g; i < k; ++i) base[g * 64 + (i - 4 * g)] = row[i];
  }
}

// c: 16 channels x 16 rows of sums (row-major, as a tile stores them). Finishes rows [0, nr)
// into y rows r0.. at channels o..o+15.
HEADWISE_TARGET_AMX void FinishTransposed(const Int8GemmArgs& a, const int32_t* c, size_t r0,
                                          size_t nr, size_t o) {
  __m512i v[16], t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) v[i] = _mm512_load_si512(c + 16 * i);
  // 16 x 16 transpose of 32-bit elements: pairs of rows, then pairs of pairs, then 128-bit lanes.
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    v[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    v[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    v[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    v[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_i32x4(v[i], v[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_i32x4(v[i + 8], v[i + 12], 0x88);
    t[i + 8] = _mm512_shuffle_i32x4(v[i], v[i + 4], 0xdd);
    t[i + 12] = _mm512_shuffle_i32x4(v[i + 8], v[i + 12], 0xdd);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm512_shuffle_i32x4(t[i], t[i + 4], 0x88);
    v[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 4], 0xdd);
    v[i + 4] = _mm512_shuffle_i32x4(t[i + 8], t[i + 12], 0x88);
    v[i + 12] = _mm512_shuffle_i32x4(t[i + 8], t[i + 12], 0xdd);
  }
  // v[r] = the 16 channels of row r.
  const __m512 w_scale = _mm512_loadu_ps(a.w_scale + o), bias = _mm512_loadu_ps(a.bias + o);
  const __m512 lo = _mm512_set1_ps(a.out_min), hi = _mm512_set1_ps(a.out_max);
  for (size_t r = 0; r < nr; ++r) {
    const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(a.x_scale[r0 + r]), w_scale);
    _mm512_storeu_ps(a.y + (r0 + r) * a.y_stride + o, Int8FinishX16(v[r], scale, bias, lo, hi));
  }
}

// Channels [begin, end), end - begin a multiple of 16, for rows [r0, r0 + n) packed in xp.
HEADWISE_TARGET_AMX void Blocks(const Int8GemmArgs& a, size_t r0, size_t n, const int8_t* xp,
                                size_t kp, size_t begin, size_t end) {
  const size_t k = a.k, full = k / 64, tail = k % 64, groups = (n + 15) / 16;
  alignas(64) int8_t wt[2][16 * 64];  // the last k % 64 inputs of 16 channels, zero-padded
  alignas(64) int32_t c[4][256];
  for (size_t o = begin; o < end; o += 32) {
    const bool two_o = o + 32 <= end;
    const int8_t* w0 = a.w + o * k;
    const int8_t* w1 = w0 + 16 * k;
    if (tail != 0) {
      std::memset(wt, 0, sizeof wt);
      for (size_t j = 0; j < (two_o ? 32u : 16u); ++j) std::memcpy(wt[j / 16] + (j % 16) * 64, w0 + j * k + 64 * full, tail);
    }
    for (size_t q = 0; q < groups; q += 2) {
      const bool two_r = q + 1 < groups;
      const int8_t* x0 = xp + q * 16 * kp;
      const int8_t* x1 = x0 + 16 * kp;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (size_t b = 0; b < full; ++b) {
        _tile_loadd(4, w0 + 64 * b, k);
        _tile_loadd(6, x0 + 1024 * b, 64);
        _tile_dpbssd(0, 4, 6);
        if (two_r) {
          _tile_loadd(7, x1 + 1024 * b, 64);
          _tile_dpbssd(2, 4, 7);
        }
        if (two_o) {
          _tile_loadd(5, w1 + 64 * b, k);
          _tile_dpbssd(1, 5, 6);
          if (two_r) _tile_dpbssd(3, 5, 7);
        }
      }
      if (tail != 0) {
        _tile_loadd(4, wt[0], 64);
        _tile_loadd(6, x0 + 1024 * full, 64);
        _tile_dpbssd(0, 4, 6);
        if (two_r) {
          _tile_loadd(7, x1 + 1024 * full, 64);
          _tile_dpbssd(2, 4, 7);
        }
        if (two_o) {
          _tile_loadd(5, wt[1], 64);
          _tile_dpbssd(1, 5, 6);
          if (two_r) _tile_dpbssd(3, 5, 7);
        }
      }
      const size_t ra = r0 + 16 * q, na = std::min<size_t>(16, n - 16 * q);
      _tile_stored(0, c[0], 64);
      FinishTransposed(a, c[0], ra, na, o);
      if (two_o) {
        _tile_stored(1, c[1], 64);
        FinishTransposed(a, c[1], ra, na, o + 16);
      }
      if (two_r) {
        const size_t rb = ra + 16, nb = std::min<size_t>(16, n - 16 * q - 16);
        _tile_stored(2, c[2], 64);
        FinishTransposed(a, c[2], rb, nb, o);
        if (two_o) {
          _tile_stored(3, c[3], 64);
          FinishTransposed(a, c[3], rb, nb, o + 16);
        }
      }
    }
  }
}

}  // namespace

bool Int8AmxAvailable() { return CpuX86().amx_int8; }

HEADWISE_TARGET_AMX void Int8GemmAmx(const Int8GemmArgs& a, size_t begin, size_t end) {
  const size_t kp = (a.k + 63) / 64 * 64;
  const size_t amx_end = begin + (end > begin ? (end - begin) / 16 * 16 : 0);
  if (a.rows < kAmxMinRows || kp > kAmxMaxK || amx_end == begin) {
    Int8GemmAvx512Vnni(a, begin, end);
    return;
  }
  TileConfig cfg;
  for (int i = 0; i < 8; ++i) {
    cfg.colsb[i] = 64;
    cfg.rows[i] = 16;
  }
  _tile_loadconfig(&cfg);
  alignas(64) int8_t xp[kPackedBytes];
  const size_t chunk = kPackedBytes / (16 * kp) * 16;  // rows packed at a time, >= 16
  for (size_t r0 = 0; r0 < a.rows; r0 += chunk) {
    const size_t n = std::min(chunk, a.rows - r0);
    PackRows(a.xq + r0 * a.k, n, a.k, kp, xp);
    Blocks(a, r0, n, xp, kp, begin, amx_end);
  }
  _tile_release();
  if (amx_end < end) Int8GemmAvx512Vnni(a, amx_end, end);
}

}  // namespace headwise::kernels

#endif  // HEADWISE_INT8_AMX
