// runtime/src/kernels/attention.h: scaled dot-product attention over exactly the heads a block
// kept. Q, K and V rows hold the heads side by side ([num_heads * head_dim] per row, as the
// fused projections write them), so a pruned head costs nothing: it is not in the rows.
#ifndef HEADWISE_RUNTIME_KERNELS_ATTENTION_H_
#define HEADWISE_RUNTIME_KERNELS_ATTENTION_H_

#include <cstddef>
#include <cstdint>

namespace headwise::kernels {

struct AttentionShape {
  size_t num_heads = 0;  // kept heads; 0 writes nothing
  size_t head_dim = 0;
  float scale = 1.0f;  // multiplies q.k (head_dim^-0.5 of the source model)
  // Floats between heads in K and V: head_dim when a row holds all heads side by side (the
  // fused projection output); T * head_dim for a head-major cache [head][position][head_dim].
  size_t kv_head_stride = 0;
};

// For every query row i < num_queries and head h < num_heads:
//   s_j = (q[i, h] . k[j, h]) * scale            for j < num_keys
//   out[i, h] = sum_j softmax(s)_j * v[j, h]
// where q[i, h] / out[i, h] are the head_dim floats at x + i * x_stride + h * head_dim and
// k[j, h] / v[j, h] those at x + h * kv_head_stride + j * x_stride. No mask: the caller
// passes only the keys a query may see (the sentence's own source tokens, the cache up to the
// current step). `scores` is scratch of num_keys floats. num_keys > 0. No allocation.
void Attention(const float* q, size_t q_stride, size_t num_queries, const float* k,
               size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
               const AttentionShape& shape, float* out, size_t out_stride, float* scores);

// Head h < shape.num_heads of Attention, same arguments. Heads touch disjoint columns of
// `out`, so different heads may run on different threads, each with its own `scores`.
//
// `key_block` non-null: key and value j are read at k / v + key_block[j] * block_stride +
// j * k_stride / v_stride (plus h * kv_head_stride) instead, so keys may come from different
// blocks (a beam's cache positions shared with the beams it split from); the arithmetic is the
// same, so the result equals that of the keys copied side by side.
void AttentionHead(size_t h, const float* q, size_t q_stride, size_t num_queries, const float* k,
                   size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
                   const AttentionShape& shape, float* out, size_t out_stride, float* scores,
                   const int32_t* key_block = nullptr, size_t block_stride = 0);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_ATTENTION_H_
