// format/model_config.h: the one configuration struct of a headwise model: what the converter
// reads from config.json (converter/src/config_reader.h), the model IR carries
// (format/model_ir.h), the file stores (schema ModelConfig, format/schema_map.h) and the
// runtime computes with (runtime/src/model_impl.h). Head counts are the source model's; the
// heads each block kept are in its BlockLayout (format/model_layout.h).
#ifndef HEADWISE_FORMAT_MODEL_CONFIG_H_
#define HEADWISE_FORMAT_MODEL_CONFIG_H_

#include <cstdint>

#include "format/model_types.h"

namespace headwise {

struct ModelConfig {
  uint32_t d_model = 0;
  uint32_t encoder_layers = 0;
  uint32_t decoder_layers = 0;
  uint32_t encoder_attention_heads = 0;  // source heads per encoder block
  uint32_t decoder_attention_heads = 0;  // source heads per decoder block
  uint32_t encoder_ffn_dim = 0;
  uint32_t decoder_ffn_dim = 0;
  uint32_t vocab_size = 0;
  // true: one embedding matrix "model.shared.weight" for encoder and decoder.
  bool share_encoder_decoder_embeddings = true;
  // true: the output projection is the decoder embedding matrix (no "lm_head.weight").
  bool tie_word_embeddings = true;
  Activation activation = Activation::kSwish;
  uint32_t max_position_embeddings = 512;
  int32_t pad_token_id = 0;
  int32_t eos_token_id = 0;
  int32_t decoder_start_token_id = 0;
  int32_t unk_token_id = 0;
  bool scale_embedding = false;
  float layer_norm_eps = 1e-5f;
};

}  // namespace headwise

#endif  // HEADWISE_FORMAT_MODEL_CONFIG_H_
