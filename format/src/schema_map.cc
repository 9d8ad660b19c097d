#include "format/schema_map.h"

#include <string>
#include <utility>

namespace headwise {
namespace sc = ::headwise::schema;

Result<DType> FromSchema(sc::DType t) {
  switch (t) {
    case sc::DType::F32: return DType::kF32;
    case sc::DType::F16: return DType::kF16;
    case sc::DType::I8: return DType::kI8;
  }
  return InvalidModel("unknown dtype " + std::to_string(static_cast<int>(t)));
}

Result<Activation> FromSchema(sc::Activation a) {
  switch (a) {
    case sc::Activation::Relu: return Activation::kRelu;
    case sc::Activation::Swish: return Activation::kSwish;
    case sc::Activation::Gelu: return Activation::kGelu;
  }
  return InvalidModel("unknown activation " + std::to_string(static_cast<int>(a)));
}

Result<AttentionKind> FromSchema(sc::AttentionKind k) {
  switch (k) {
    case sc::AttentionKind::EncoderSelf: return AttentionKind::kEncoderSelf;
    case sc::AttentionKind::DecoderSelf: return AttentionKind::kDecoderSelf;
    case sc::AttentionKind::DecoderCross: return AttentionKind::kDecoderCross;
  }
  return InvalidModel("unknown kind " + std::to_string(static_cast<int>(k)));
}

sc::DType ToSchema(DType t) {
  switch (t) {
    case DType::kF32: return sc::DType::F32;
    case DType::kF16: return sc::DType::F16;
    case DType::kI8: return sc::DType::I8;
  }
  return sc::DType::F32;
}

sc::Activation ToSchema(Activation a) {
  switch (a) {
    case Activation::kRelu: return sc::Activation::Relu;
    case Activation::kSwish: return sc::Activation::Swish;
    case Activation::kGelu: return sc::Activation::Gelu;
  }
  return sc::Activation::Swish;
}

sc::AttentionKind ToSchema(AttentionKind k) {
  switch (k) {
    case AttentionKind::kEncoderSelf: return sc::AttentionKind::EncoderSelf;
    case AttentionKind::kDecoderSelf: return sc::AttentionKind::DecoderSelf;
    case AttentionKind::kDecoderCross: return sc::AttentionKind::DecoderCross;
  }
  return sc::AttentionKind::EncoderSelf;
}

Result<ModelConfig> ConfigFromSchema(const sc::ModelConfig& c) {
  ModelConfig m;
  m.d_model = c.d_model();
  m.encoder_layers = c.encoder_layers();
  m.decoder_layers = c.decoder_layers();
  m.encoder_attention_heads = c.encoder_attention_heads();
  m.decoder_attention_heads = c.decoder_attention_heads();
  m.encoder_ffn_dim = c.encoder_ffn_dim();
  m.decoder_ffn_dim = c.decoder_ffn_dim();
  m.vocab_size = c.vocab_size();
  m.share_encoder_decoder_embeddings = c.share_encoder_decoder_embeddings();
  m.tie_word_embeddings = c.tie_word_embeddings();
  Result<Activation> activation = FromSchema(c.activation());
  if (!activation.ok()) return activation.status().WithContext("config");
  m.activation = *activation;
  m.max_position_embeddings = c.max_position_embeddings();
  m.pad_token_id = c.pad_token_id();
  m.eos_token_id = c.eos_token_id();
  m.decoder_start_token_id = c.decoder_start_token_id();
  m.unk_token_id = c.unk_token_id();
  m.scale_embedding = c.scale_embedding();
  m.layer_norm_eps = c.layer_norm_eps();
  return m;
}

Result<std::vector<BlockLayout>> BlocksFromSchema(const sc::Model& m) {
  std::vector<BlockLayout> blocks;
  const auto* attention = m.attention();
  if (attention == nullptr) return blocks;
  for (flatbuffers::uoffset_t i = 0; i < attention->size(); ++i) {
    const sc::AttentionBlock* a = attention->Get(i);
    const std::string where = "attention block " + std::to_string(i);
    if (a == nullptr) return InvalidModel(where + " is missing");
    Result<AttentionKind> kind = FromSchema(a->kind());
    if (!kind.ok()) return kind.status().WithContext(where);
    BlockLayout b;
    b.kind = *kind;
    b.layer = a->layer();
    b.num_heads = a->num_heads();
    b.head_dim = a->head_dim();
    b.original_num_heads = a->original_num_heads();
    if (const auto* kept = a->kept_heads(); kept != nullptr) {
      b.kept_heads.assign(kept->begin(), kept->end());
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

}  // namespace headwise
