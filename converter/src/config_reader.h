// converter/src/config_reader.h: reads a Hugging Face MarianMT config.json.
//
// Required keys (integers): d_model, encoder_layers, decoder_layers, encoder_attention_heads,
// decoder_attention_heads, encoder_ffn_dim, decoder_ffn_dim, vocab_size,
// max_position_embeddings, pad_token_id, eos_token_id, decoder_start_token_id; and
// activation_function, one of swish, silu (= swish), relu, gelu.
// Optional booleans (Hugging Face defaults): scale_embedding (false),
// share_encoder_decoder_embeddings (true), tie_word_embeddings (true), normalize_before
// (false; true, pre-LayerNorm, is refused as not supported).
// Also checked when present: model_type == "marian", decoder_vocab_size == vocab_size.
// headwise's own optional key: headwise_gate_rule, "hard" (the default) or "continuous", the
// test-time rule of the checkpoint's head gates (ParseGateRuleKey).
// Every other key is ignored. layer_norm_eps is not a MarianConfig key: 1e-5, as nn.LayerNorm.
//
// Errors (kInvalidCheckpoint) name `where`, the key, what was expected and what was found.
#ifndef HEADWISE_CONVERTER_CONFIG_READER_H_
#define HEADWISE_CONVERTER_CONFIG_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "format/model_config.h"
#include "headwise/status.hpp"

namespace headwise::convert {

// The config.json values as the model config (unk_token_id and layer_norm_eps keep their
// defaults: the vocabulary gives the first, MarianConfig has no second).
Result<ModelConfig> ParseMarianConfig(std::string_view json_text, const std::string& where);

inline constexpr char kGateRuleKey[] = "headwise_gate_rule";

// config.json's headwise_gate_rule (format/model_types.h GateRule); kHard when absent.
Result<GateRule> ParseGateRuleKey(std::string_view json_text, const std::string& where);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_CONFIG_READER_H_
