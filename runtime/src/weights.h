// runtime/src/weights.h: typed, read-only views of the weight tensors of a loaded model.
//
// Ownership: a WeightView points into the model's data segment (the read-only file mapping or
// the caller's buffer given to LoadFromMemory); it is valid while the Model lives. Nothing here
// owns memory.
//
// Weight matrices come as F32, F16 or I8 (per-row scales, pointing into the file's
// flatbuffer); vectors (biases, LayerNorm) are always F32 (model_verify.cc checks both).
// Operators pick a kernel by `dtype` when they are created (fc/fully_connected.cc,
// layer_common.cc's EmbedTokens); WidenRow is the one per-dtype decoding that every other
// path (the XNNPACK f32 operator, embeddings without their own kernel) goes through, so a new
// dtype needs its accessor and its case there.
#ifndef HEADWISE_RUNTIME_WEIGHTS_H_
#define HEADWISE_RUNTIME_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/half.h"
#include "format/model_types.h"  // DType

namespace headwise {

// A 1-D ([cols], rows == 1) or 2-D row-major ([rows, cols]) tensor.
struct WeightView {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  uint32_t rows = 0;
  uint32_t cols = 0;
  // I8 only: one scale per row (output channel), value = q * scale[row]. Null otherwise.
  const float* scale = nullptr;

  bool empty() const { return data == nullptr; }
  size_t elements() const { return static_cast<size_t>(rows) * cols; }
  // Valid when dtype == kF32 (the loader guarantees 64-byte alignment).
  const float* f32() const { return static_cast<const float*>(data); }
  const uint16_t* f16() const { return static_cast<const uint16_t*>(data); }
  const int8_t* i8() const { return static_cast<const int8_t*>(data); }

  // The F32 values of row r (cols floats): F16 widened exactly, I8 times its row scale.
  void WidenRow(size_t r, float* out) const {
    const size_t at = r * cols;
    switch (dtype) {
      case DType::kF32:
        std::memcpy(out, f32() + at, cols * sizeof(float));
        return;
      case DType::kF16:
        for (size_t c = 0; c < cols; ++c) out[c] = F16ToFloat(f16()[at + c]);
        return;
      case DType::kI8:
        for (size_t c = 0; c < cols; ++c) out[c] = static_cast<float>(i8()[at + c]) * scale[r];
        return;
    }
  }
};

// One attention block with its kept heads. With num_heads == 0 only out_b is set: the block's
// output is out_b at every position.
struct AttentionWeights {
  uint32_t num_heads = 0;  // kept heads
  uint32_t head_dim = 0;   // of the source model; the q scale is head_dim^-0.5
  WeightView q_w, q_b, k_w, k_b, v_w, v_b;  // [num_heads*head_dim, d_model], [num_heads*head_dim]
  WeightView out_w;                         // [d_model, num_heads*head_dim]
  WeightView out_b;                         // [d_model]
  uint32_t inner() const { return num_heads * head_dim; }
};

struct LayerNormWeights {
  WeightView gamma, beta;  // [d_model]
};

struct FfnWeights {
  WeightView fc1_w, fc1_b;  // [ffn, d_model], [ffn]
  WeightView fc2_w, fc2_b;  // [d_model, ffn], [d_model]
};

struct EncoderLayerWeights {
  AttentionWeights self_attn;
  LayerNormWeights self_attn_norm;
  FfnWeights ffn;
  LayerNormWeights final_norm;
};

struct DecoderLayerWeights {
  AttentionWeights self_attn;
  LayerNormWeights self_attn_norm;
  AttentionWeights cross_attn;
  LayerNormWeights cross_attn_norm;
  FfnWeights ffn;
  LayerNormWeights final_norm;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_WEIGHTS_H_
