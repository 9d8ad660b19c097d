#include "kernels/attention.h"

#include <cstring>

#include "kernels/softmax.h"
#include "kernels/vec.h"

namespace headwise::kernels {

void AttentionHead(size_t h, const float* q, size_t q_stride, size_t num_queries, const float* k,
                   size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
                   const AttentionShape& shape, float* out, size_t out_stride, float* scores) {
  const size_t hd = shape.head_dim;
  const float* kh = k + h * shape.kv_head_stride;
  const float* vh = v + h * shape.kv_head_stride;
  // All queries of one head in a row: the head's keys and values (num_keys * head_dim floats
  // each) stay in cache while every query visits them.
  for (size_t i = 0; i < num_queries; ++i) {
    const float* qi = q + i * q_stride + h * hd;
    for (size_t j = 0; j < num_keys; ++j) scores[j] = Dot(qi, kh + j * k_stride, hd) * shape.scale;
    SoftmaxInPlace(scores, num_keys);
    float* o = out + i * out_stride + h * hd;
    std::memset(o, 0, hd * sizeof(float));
    for (size_t j = 0; j < num_keys; ++j) Axpy(scores[j], vh + j * v_stride, o, hd);
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
