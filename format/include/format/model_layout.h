// format/model_layout.h: which tensors a headwise model holds and their shapes, derived from
// the config and the heads each attention block kept. The converter validates what it is about
// to write against this list and the runtime validates what it loaded against the same list, so
// the two cannot disagree.
//
// Names are the Hugging Face MarianMT names. With h kept heads of size hd in a block and
// d = d_model:
//   <block>.{q,k,v}_proj.weight [h*hd, d], <block>.{q,k,v}_proj.bias [h*hd],
//   <block>.out_proj.weight [d, h*hd], <block>.out_proj.bias [d].
// A block with h == 0 holds only out_proj.bias: its output is that bias for every position.
// Per layer: self_attn_layer_norm, (decoder: encoder_attn_layer_norm), final_layer_norm
// {weight,bias} [d]; fc1.weight [ffn, d], fc1.bias [ffn], fc2.weight [d, ffn], fc2.bias [d].
// Embeddings: model.shared.weight [V, d] when shared, else model.encoder.embed_tokens.weight
// and model.decoder.embed_tokens.weight; lm_head.weight [V, d] unless tied to the decoder
// embedding; final_logits_bias [1, V].
#ifndef HEADWISE_FORMAT_MODEL_LAYOUT_H_
#define HEADWISE_FORMAT_MODEL_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/model_config.h"
#include "headwise/status.hpp"

namespace headwise {

// "model.encoder.layers.3.self_attn", "model.decoder.layers.0.encoder_attn", ...
std::string BlockPrefix(AttentionKind kind, uint32_t layer);
// "encoder self-attention layer 3" for messages.
std::string BlockDescription(AttentionKind kind, uint32_t layer);

struct BlockLayout {
  AttentionKind kind = AttentionKind::kEncoderSelf;
  uint32_t layer = 0;
  uint32_t num_heads = 0;           // kept
  uint32_t head_dim = 0;
  uint32_t original_num_heads = 0;
  std::vector<uint32_t> kept_heads;  // ascending indices into the source heads
};

struct ExpectedTensor {
  std::string name;
  std::vector<uint32_t> shape;
};

// Checks the config (non-zero sizes, d_model divisible by the source heads) and the blocks:
// exactly one per (kind, layer) in the canonical order (encoder self 0.., decoder self 0..,
// decoder cross 0..), head_dim == d_model / source heads, kept_heads ascending, unique, in range
// and of length num_heads. Errors: kInvalidModel naming the block and the mismatch.
Status ValidateLayout(const ModelConfig& config, const std::vector<BlockLayout>& blocks);

// All tensors of the model in canonical order (embeddings, encoder layers, decoder layers,
// lm_head, final_logits_bias). Call after ValidateLayout.
std::vector<ExpectedTensor> ExpectedTensors(const ModelConfig& config,
                                            const std::vector<BlockLayout>& blocks);

// "[192, 256]"
std::string ShapeToString(const std::vector<uint32_t>& shape);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_MODEL_LAYOUT_H_
