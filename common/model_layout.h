// common/model_layout.h: which tensors a headwise model holds and their shapes, derived from
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
#ifndef HEADWISE_COMMON_MODEL_LAYOUT_H_
#define HEADWISE_COMMON_MODEL_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "headwise/status.hpp"

namespace headwise {

enum class BlockKind : uint8_t { kEncoderSelf = 0, kDecoderSelf = 1, kDecoderCross = 2 };

// "model.encoder.layers.3.self_attn", "model.decoder.layers.0.encoder_attn", ...
std::string BlockPrefix(BlockKind kind, uint32_t layer);
// "encoder self-attention layer 3" for messages.
std::string BlockDescription(BlockKind kind, uint32_t layer);
// "encoder_self", "decoder_self", "decoder_cross": the kind's name in JSON documents (inspect
// reports, the trainer's analysis.json); "unknown" for a value outside the enum.
const char* BlockKindJsonName(BlockKind kind);

struct LayoutConfig {
  uint32_t d_model = 0;
  uint32_t encoder_layers = 0;
  uint32_t decoder_layers = 0;
  uint32_t encoder_attention_heads = 0;  // source heads per encoder block
  uint32_t decoder_attention_heads = 0;  // source heads per decoder block
  uint32_t encoder_ffn_dim = 0;
  uint32_t decoder_ffn_dim = 0;
  uint32_t vocab_size = 0;
  bool share_encoder_decoder_embeddings = true;
  bool tie_word_embeddings = true;
};

struct BlockLayout {
  BlockKind kind = BlockKind::kEncoderSelf;
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
Status ValidateLayout(const LayoutConfig& config, const std::vector<BlockLayout>& blocks);

// All tensors of the model in canonical order (embeddings, encoder layers, decoder layers,
// lm_head, final_logits_bias). Call after ValidateLayout.
std::vector<ExpectedTensor> ExpectedTensors(const LayoutConfig& config,
                                            const std::vector<BlockLayout>& blocks);

// "[192, 256]"
std::string ShapeToString(const std::vector<uint32_t>& shape);

}  // namespace headwise

#endif  // HEADWISE_COMMON_MODEL_LAYOUT_H_
