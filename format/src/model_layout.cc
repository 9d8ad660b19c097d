#include "format/model_layout.h"

#include <sstream>

namespace headwise {
namespace {

const char* KindStack(AttentionKind kind) { return kind == AttentionKind::kEncoderSelf ? "encoder" : "decoder"; }
const char* KindModule(AttentionKind kind) {
  return kind == AttentionKind::kDecoderCross ? "encoder_attn" : "self_attn";
}

void AddAttention(std::vector<ExpectedTensor>& out, const BlockLayout& b, uint32_t d) {
  const std::string p = BlockPrefix(b.kind, b.layer) + ".";
  const uint32_t inner = b.num_heads * b.head_dim;
  if (inner > 0) {
    for (const char* proj : {"q_proj", "k_proj", "v_proj"}) {
      out.push_back({p + proj + ".weight", {inner, d}});
      out.push_back({p + proj + ".bias", {inner}});
    }
    out.push_back({p + "out_proj.weight", {d, inner}});
  }
  out.push_back({p + "out_proj.bias", {d}});
}

void AddNorm(std::vector<ExpectedTensor>& out, const std::string& name, uint32_t d) {
  out.push_back({name + ".weight", {d}});
  out.push_back({name + ".bias", {d}});
}

void AddFfn(std::vector<ExpectedTensor>& out, const std::string& layer, uint32_t d, uint32_t ffn) {
  out.push_back({layer + "fc1.weight", {ffn, d}});
  out.push_back({layer + "fc1.bias", {ffn}});
  out.push_back({layer + "fc2.weight", {d, ffn}});
  out.push_back({layer + "fc2.bias", {d}});
}

}  // namespace

std::string BlockPrefix(AttentionKind kind, uint32_t layer) {
  return std::string("model.") + KindStack(kind) + ".layers." + std::to_string(layer) + "." +
         KindModule(kind);
}

std::string BlockDescription(AttentionKind kind, uint32_t layer) {
  static const char* const kNames[] = {"encoder self-attention", "decoder self-attention",
                                       "decoder cross-attention"};
  return std::string(kNames[static_cast<int>(kind)]) + " layer " + std::to_string(layer);
}

std::string ShapeToString(const std::vector<uint32_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

Status ValidateLayout(const ModelConfig& c, const std::vector<BlockLayout>& blocks) {
  if (c.d_model == 0 || c.vocab_size == 0 || c.encoder_layers == 0 || c.decoder_layers == 0 ||
      c.encoder_attention_heads == 0 || c.decoder_attention_heads == 0 ||
      c.encoder_ffn_dim == 0 || c.decoder_ffn_dim == 0) {
    return InvalidModel("config: d_model, vocab_size, layer counts, head counts and ffn dims "
                        "must all be > 0");
  }
  for (uint32_t heads : {c.encoder_attention_heads, c.decoder_attention_heads}) {
    if (c.d_model % heads != 0) {
      return InvalidModel("config: d_model " + std::to_string(c.d_model) +
                          " is not divisible by " + std::to_string(heads) + " heads");
    }
  }
  const size_t expected_blocks = c.encoder_layers + 2u * static_cast<size_t>(c.decoder_layers);
  if (blocks.size() != expected_blocks) {
    return InvalidModel("expected " + std::to_string(expected_blocks) +
                        " attention blocks (encoder self, decoder self, decoder cross per layer), "
                        "found " + std::to_string(blocks.size()));
  }
  size_t i = 0;
  for (AttentionKind kind : {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kDecoderCross}) {
    const uint32_t layers = kind == AttentionKind::kEncoderSelf ? c.encoder_layers : c.decoder_layers;
    const uint32_t heads =
        kind == AttentionKind::kEncoderSelf ? c.encoder_attention_heads : c.decoder_attention_heads;
    for (uint32_t l = 0; l < layers; ++l, ++i) {
      const BlockLayout& b = blocks[i];
      const std::string where = "attention block " + std::to_string(i) + " (" +
                                BlockDescription(kind, l) + ")";
      if (b.kind != kind || b.layer != l) {
        return InvalidModel(where + ": found " + BlockDescription(b.kind, b.layer) +
                            " out of canonical order");
      }
      if (b.original_num_heads != heads) {
        return InvalidModel(where + ": expected " + std::to_string(heads) +
                            " source heads, found " + std::to_string(b.original_num_heads));
      }
      if (b.head_dim != c.d_model / heads) {
        return InvalidModel(where + ": expected head_dim " + std::to_string(c.d_model / heads) +
                            ", found " + std::to_string(b.head_dim));
      }
      if (b.num_heads > heads || b.kept_heads.size() != b.num_heads) {
        return InvalidModel(where + ": " + std::to_string(b.num_heads) + " kept heads with " +
                            std::to_string(b.kept_heads.size()) + " indices, source has " +
                            std::to_string(heads));
      }
      for (size_t k = 0; k < b.kept_heads.size(); ++k) {
        if (b.kept_heads[k] >= heads || (k > 0 && b.kept_heads[k] <= b.kept_heads[k - 1])) {
          return InvalidModel(where + ": kept head indices must be ascending, unique and < " +
                              std::to_string(heads));
        }
      }
    }
  }
  return Status::Ok();
}

std::vector<ExpectedTensor> ExpectedTensors(const ModelConfig& c,
                                            const std::vector<BlockLayout>& blocks) {
  std::vector<ExpectedTensor> out;
  const uint32_t d = c.d_model, v = c.vocab_size;
  if (c.share_encoder_decoder_embeddings) {
    out.push_back({"model.shared.weight", {v, d}});
  } else {
    out.push_back({"model.encoder.embed_tokens.weight", {v, d}});
    out.push_back({"model.decoder.embed_tokens.weight", {v, d}});
  }
  const size_t dec_self = c.encoder_layers, dec_cross = c.encoder_layers + c.decoder_layers;
  for (uint32_t l = 0; l < c.encoder_layers; ++l) {
    const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
    AddAttention(out, blocks[l], d);
    AddNorm(out, p + "self_attn_layer_norm", d);
    AddFfn(out, p, d, c.encoder_ffn_dim);
    AddNorm(out, p + "final_layer_norm", d);
  }
  for (uint32_t l = 0; l < c.decoder_layers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    AddAttention(out, blocks[dec_self + l], d);
    AddNorm(out, p + "self_attn_layer_norm", d);
    AddAttention(out, blocks[dec_cross + l], d);
    AddNorm(out, p + "encoder_attn_layer_norm", d);
    AddFfn(out, p, d, c.decoder_ffn_dim);
    AddNorm(out, p + "final_layer_norm", d);
  }
  if (!c.tie_word_embeddings) out.push_back({"lm_head.weight", {v, d}});
  out.push_back({"final_logits_bias", {1, v}});
  return out;
}

}  // namespace headwise
