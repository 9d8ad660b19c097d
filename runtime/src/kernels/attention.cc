#include "kernels/attention.h"

#include <cstring>

#include "kernels/softmax.h"
#include "kernels/vec.h"
#include "kernels/vec_avx2.h"

#ifdef HEADWISE_HAVE_AVX2_PATHS
#include <immintrin.h>
#endif

namespace headwise::kernels {
namespace {

// Where key (and value) j lies: j rows on, in the block key_block[j] when there is a table.
struct KeyRows {
  const int32_t* block;
  size_t block_stride;
  const float* Key(const float* base, size_t stride, size_t j) const {
    const float* row = base + j * stride;
    return block == nullptr ? row : row + static_cast<size_t>(block[j]) * block_stride;
  }
};

#ifdef HEADWISE_HAVE_AVX2_PATHS
// AttentionHead for head_dim = 8 * C on AVX2 + FMA. Scores come 8 keys at a time (eight
// independent accumulators, one transposing reduction), and the query's output stays in C
// registers while the weighted values are added. The sums are fused multiply-adds in another
// order than the portable loop's, so results differ from it by rounding only. The loops over C
// and over the keys of a block are unrolled so that the accumulators stay in registers (GCC
// left the output sums o[] on the stack, a store and a load around every multiply-add).
template <int C>
HEADWISE_AVX2_FMA void AttentionHeadAvx2(size_t h, const float* q, size_t q_stride,
                                         size_t num_queries, const float* k, size_t k_stride,
                                         const float* v, size_t v_stride, size_t num_keys,
                                         const AttentionShape& shape, float* out,
                                         size_t out_stride, float* scores, KeyRows rows) {
  constexpr size_t hd = 8 * C;
  const float* kh = k + h * shape.kv_head_stride;
  const float* vh = v + h * shape.kv_head_stride;
  const __m256 scale = _mm256_set1_ps(shape.scale);
  for (size_t i = 0; i < num_queries; ++i) {
    const float* qi = q + i * q_stride + h * hd;
    __m256 qv[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) qv[c] = _mm256_loadu_ps(qi + 8 * c);
    size_t j = 0;
    for (; j + 8 <= num_keys; j += 8) {
      __m256 a[8];
#pragma GCC unroll 8
      for (int t = 0; t < 8; ++t) {
        const float* kj = rows.Key(kh, k_stride, j + t);
        a[t] = _mm256_mul_ps(qv[0], _mm256_loadu_ps(kj));
#pragma GCC unroll 8
        for (int c = 1; c < C; ++c) {
          a[t] = _mm256_fmadd_ps(qv[c], _mm256_loadu_ps(kj + 8 * c), a[t]);
        }
      }
      const __m256 h01 = _mm256_hadd_ps(a[0], a[1]), h23 = _mm256_hadd_ps(a[2], a[3]);
      const __m256 h45 = _mm256_hadd_ps(a[4], a[5]), h67 = _mm256_hadd_ps(a[6], a[7]);
      const __m256 h0123 = _mm256_hadd_ps(h01, h23), h4567 = _mm256_hadd_ps(h45, h67);
      const __m256 sums = _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20),
                                        _mm256_permute2f128_ps(h0123, h4567, 0x31));
      _mm256_storeu_ps(scores + j, _mm256_mul_ps(sums, scale));
    }
    // Four keys at a time, each summed as the one-key loop below sums it: the halves added,
    // then (l0 + l1) + (l2 + l3), which three hadds give for four keys at once.
    for (; j + 4 <= num_keys; j += 4) {
      __m128 x[4];
#pragma GCC unroll 8
      for (int t = 0; t < 4; ++t) {
        const float* kj = rows.Key(kh, k_stride, j + t);
        __m256 a = _mm256_mul_ps(qv[0], _mm256_loadu_ps(kj));
#pragma GCC unroll 8
        for (int c = 1; c < C; ++c) a = _mm256_fmadd_ps(qv[c], _mm256_loadu_ps(kj + 8 * c), a);
        x[t] = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
      }
      const __m128 sums = _mm_hadd_ps(_mm_hadd_ps(x[0], x[1]), _mm_hadd_ps(x[2], x[3]));
      _mm_storeu_ps(scores + j, _mm_mul_ps(sums, _mm256_castps256_ps128(scale)));
    }
    for (; j < num_keys; ++j) {
      const float* kj = rows.Key(kh, k_stride, j);
      __m256 a = _mm256_mul_ps(qv[0], _mm256_loadu_ps(kj));
#pragma GCC unroll 8
      for (int c = 1; c < C; ++c) a = _mm256_fmadd_ps(qv[c], _mm256_loadu_ps(kj + 8 * c), a);
      __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
      s4 = _mm_hadd_ps(s4, s4);
      s4 = _mm_hadd_ps(s4, s4);
      scores[j] = _mm_cvtss_f32(s4) * shape.scale;
    }
    SoftmaxInPlace(scores, num_keys);
    __m256 o[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) o[c] = _mm256_setzero_ps();
    for (size_t jj = 0; jj < num_keys; ++jj) {
      const __m256 p = _mm256_broadcast_ss(scores + jj);
      const float* vj = rows.Key(vh, v_stride, jj);
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) o[c] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vj + 8 * c), o[c]);
    }
    float* oi = out + i * out_stride + h * hd;
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(oi + 8 * c, o[c]);
  }
}
#endif

}  // namespace

void AttentionHead(size_t h, const float* q, size_t q_stride, size_t num_queries, const float* k,
                   size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
                   const AttentionShape& shape, float* out, size_t out_stride, float* scores,
                   const int32_t* key_block, size_t block_stride) {
  const size_t hd = shape.head_dim;
  const KeyRows rows{key_block, block_stride};
#ifdef HEADWISE_HAVE_AVX2_PATHS
  if (CpuHasAvx2Fma()) {
    switch (hd) {
      case 16:
        return AttentionHeadAvx2<2>(h, q, q_stride, num_queries, k, k_stride, v, v_stride,
                                      num_keys, shape, out, out_stride, scores, rows);
      case 32:
        return AttentionHeadAvx2<4>(h, q, q_stride, num_queries, k, k_stride, v, v_stride,
                                      num_keys, shape, out, out_stride, scores, rows);
      case 64:
        return AttentionHeadAvx2<8>(h, q, q_stride, num_queries, k, k_stride, v, v_stride,
                                      num_keys, shape, out, out_stride, scores, rows);
      default: break;
    }
  }
#endif
  const float* kh = k + h * shape.kv_head_stride;
  const float* vh = v + h * shape.kv_head_stride;
  // All queries of one head in a row: the head's keys and values (num_keys * head_dim floats
  // each) stay in cache while every query visits them.
  for (size_t i = 0; i < num_queries; ++i) {
    const float* qi = q + i * q_stride + h * hd;
    for (size_t j = 0; j < num_keys; ++j) scores[j] = Dot(qi, rows.Key(kh, k_stride, j), hd) * shape.scale;
    SoftmaxInPlace(scores, num_keys);
    float* o = out + i * out_stride + h * hd;
    std::memset(o, 0, hd * sizeof(float));
    for (size_t j = 0; j < num_keys; ++j) Axpy(scores[j], rows.Key(vh, v_stride, j), o, hd);
  }
}

void Attention(const float* q, size_t q_stride, size_t num_queries, const float* k,
               size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
               const AttentionShape& shape, float* out, size_t out_stride, float* scores) {
  for (size_t h = 0; h < shape.num_heads; ++h) {
    AttentionHead(h, q, q_stride, num_queries, k, k_stride, v, v_stride, num_keys, shape, out,
                  out_stride, scores);
  }
}

}  // namespace headwise::kernels
