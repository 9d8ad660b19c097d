// runtime/src/kernels/int8_gemm_avx512vnni.h: the x86 AVX-512 VNNI int8 family (int8_gemm.h lists
// the families and their common contract). Compiled on x86 only; run only when
// CpuX86().avx512_vnni (kernels/cpu_x86.h).
//
// vpdpbusd multiplies unsigned by signed bytes, so w is read as the unsigned w + 128 (one xor
// per 64 weight bytes, in registers: the file's bytes are read in place) and 128 * sum_k x[r, k]
// is subtracted from each sum; the int32 arithmetic wraps, so the result is the exact sum for
// every k the contract allows. Output channels in blocks of 16 that every row passes while the
// block's weights stay in L1; tiles of 16 accumulators (1 row x 16 channels for a single row,
// 2 x 8, 4 x 4 for several: each weight vector loaded once for the tile's rows), reduced across
// lanes to one vector of 16 sums and finished 16 at a time with the reference's operations
// (Int8FinishX16); the weights two blocks ahead are prefetched.
#ifndef HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX512VNNI_H_
#define HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX512VNNI_H_

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#define HEADWISE_INT8_AVX512VNNI 1
#include "kernels/x86_intrinsics.h"

#define HEADWISE_TARGET_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace headwise::kernels {

bool Int8Avx512VnniAvailable();  // CpuX86().avx512_vnni
void Int8GemmAvx512Vnni(const Int8GemmArgs& a, size_t begin, size_t end);

// c[r] = 128 * sum_k x[r, k] for n rows of k bytes: what reading the weights as w + 128 adds to
// each sum (|sum| <= 127 k < 2^24: no overflow). Shared by the row-major and the packed tiles.
HEADWISE_TARGET_AVX512VNNI inline void Int8VnniCorrections(const int8_t* x, size_t n, size_t k,
                                                           int32_t* c) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (size_t r = 0; r < n; ++r) {
    const int8_t* row = x + r * k;
    __m512i acc = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= k; i += 64) acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512(row + i));
    if (i < k) {
      acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(~0ull >> (64 - (k - i)), row + i));
    }
    c[r] = 128 * _mm512_reduce_add_epi32(acc);
  }
}

// The reference's finish (int8_gemm_kernel.h Int8Finish) on 16 lanes:
//   min(hi, max(lo, float(acc) * scale + bias))  with scale = x_scale[r] * w_scale[o]
// rounded as the scalar code rounds: the product is kept out of a fused multiply-add (the
// empty asm hides it from contraction), vmaxps/vminps return their second operand for equal
// or NaN inputs as std::max(lo, v)/std::min(hi, v) return lo/hi.
HEADWISE_TARGET_AVX512VNNI inline __m512 Int8FinishX16(__m512i acc, __m512 scale, __m512 bias,
                                                       __m512 lo, __m512 hi) {
  __m512 p = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
  __asm__("" : "+v"(p));
  return _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(p, bias), lo), hi);
}

}  // namespace headwise::kernels

#endif
#endif  // HEADWISE_RUNTIME_KERNELS_INT8_GEMM_AVX512VNNI_H_
