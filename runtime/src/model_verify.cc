#include "model_verify.h"

#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/model_layout.h"
#include "format/schema_map.h"
#include "model_describe.h"

namespace headwise {
namespace {

using TensorMap = std::unordered_map<std::string, const schema::Tensor*>;

Status CheckSpecialId(const char* name, int32_t id, uint32_t vocab) {
  if (id < 0 || static_cast<uint32_t>(id) >= vocab) {
    return InvalidModel(std::string("config: ") + name + " " + std::to_string(id) +
                        " is outside the vocabulary of " + std::to_string(vocab));
  }
  return Status::Ok();
}

// Weight matrices may be F32, F16 or I8 (with one finite, positive scale per row, axis 0);
// vectors and final_logits_bias are added to activations and must be F32.
Status CheckDType(const ExpectedTensor& e, const schema::Tensor& t) {
  const bool matrix = e.shape.size() == 2 && e.name != "final_logits_bias";
  HW_ASSIGN_OR_RETURN(const DType dtype, FromSchema(t.dtype()));
  if (dtype == DType::kF32) return Status::Ok();
  if (!matrix || (dtype != DType::kF16 && dtype != DType::kI8)) {
    return InvalidModel(e.name + ": dtype " + DTypeName(dtype) +
                        (matrix ? " is not executed by this runtime (F32, F16 or I8)"
                                : " is not allowed here (biases and LayerNorm parameters are F32)"));
  }
  if (dtype == DType::kF16) return Status::Ok();
  const schema::Quantization* q = t.quantization();
  const auto* scale = q != nullptr ? q->scale() : nullptr;
  const uint32_t rows = e.shape[0];
  if (q == nullptr || q->axis() != 0 || scale == nullptr || scale->size() != rows) {
    return InvalidModel(e.name + ": I8 needs quantization with axis 0 and " +
                        std::to_string(rows) + " row scales, found " +
                        (q == nullptr ? std::string("none")
                                      : "axis " + std::to_string(q->axis()) + " and " +
                                            std::to_string(scale != nullptr ? scale->size() : 0) +
                                            " scales"));
  }
  if (q->zero_point() != nullptr && q->zero_point()->size() != 0) {
    return InvalidModel(e.name + ": I8 weights are symmetric; found zero points");
  }
  for (flatbuffers::uoffset_t r = 0; r < scale->size(); ++r) {
    const float v = scale->Get(r);
    if (!(std::isfinite(v) && v > 0.0f)) {
      return InvalidModel(e.name + ": row " + std::to_string(r) +
                          " scale must be finite and > 0, found " + std::to_string(v));
    }
  }
  return Status::Ok();
}

// Checks every expected tensor against the file and the file against the expectation.
Result<TensorMap> MatchTensors(const schema::Model& m, const std::vector<ExpectedTensor>& expected) {
  TensorMap found;
  if (const auto* tensors = m.tensors(); tensors != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
      const schema::Tensor* t = tensors->Get(i);
      const flatbuffers::String* name = t != nullptr ? t->name() : nullptr;
      if (name == nullptr) return InvalidModel("tensor " + std::to_string(i) + " has no name");
      if (!found.emplace(name->str(), t).second) {
        return InvalidModel("tensor '" + name->str() + "' appears more than once");
      }
    }
  }
  for (const ExpectedTensor& e : expected) {
    auto it = found.find(e.name);
    if (it == found.end()) {
      return InvalidModel(e.name + ": missing (expected shape " + ShapeToString(e.shape) + ")");
    }
    const schema::Tensor& t = *it->second;
    std::vector<uint32_t> shape;
    if (t.shape() != nullptr) shape.assign(t.shape()->begin(), t.shape()->end());
    if (shape != e.shape) {
      return InvalidModel(e.name + ": expected " + ShapeToString(e.shape) + ", found " +
                          ShapeToString(shape));
    }
    HW_RETURN_IF_ERROR(CheckDType(e, t));
  }
  if (found.size() != expected.size()) {
    std::unordered_map<std::string, bool> wanted;
    for (const ExpectedTensor& e : expected) wanted.emplace(e.name, true);
    for (const auto& [name, t] : found) {
      if (wanted.count(name) == 0) {
        return InvalidModel("unexpected tensor '" + name +
                            "' (not part of this config and head layout)");
      }
    }
  }
  return found;
}

class WeightBinder {
 public:
  WeightBinder(const TensorMap& tensors, const uint8_t* data) : tensors_(tensors), data_(data) {}

  // Only called for names MatchTensors has checked, so the lookup cannot fail.
  WeightView operator()(const std::string& name) const {
    const schema::Tensor& t = *tensors_.at(name);
    WeightView w;
    w.data = data_ + t.offset();
    w.dtype = *FromSchema(t.dtype());  // VerifyModelFile checked it is known
    if (w.dtype == DType::kI8) {  // CheckDType verified the scales
      const schema::Quantization* q = t.quantization();
      const flatbuffers::Vector<float>* scale = q != nullptr ? q->scale() : nullptr;
      w.scale = scale != nullptr ? scale->data() : nullptr;
    }
    // MatchTensors compared the shape with a 1-D or 2-D expectation, so it is present.
    const flatbuffers::Vector<uint32_t>* shape = t.shape();
    if (shape == nullptr || shape->size() == 0) return w;
    w.rows = shape->size() == 2 ? shape->Get(0) : 1;
    w.cols = shape->Get(shape->size() - 1);
    return w;
  }

  AttentionWeights Attention(const BlockLayout& b) const {
    const std::string p = BlockPrefix(b.kind, b.layer) + ".";
    AttentionWeights a;
    a.num_heads = b.num_heads;
    a.head_dim = b.head_dim;
    if (b.num_heads > 0) {
      a.q_w = (*this)(p + "q_proj.weight");
      a.q_b = (*this)(p + "q_proj.bias");
      a.k_w = (*this)(p + "k_proj.weight");
      a.k_b = (*this)(p + "k_proj.bias");
      a.v_w = (*this)(p + "v_proj.weight");
      a.v_b = (*this)(p + "v_proj.bias");
      a.out_w = (*this)(p + "out_proj.weight");
    }
    a.out_b = (*this)(p + "out_proj.bias");
    return a;
  }
  LayerNormWeights Norm(const std::string& name) const {
    return {(*this)(name + ".weight"), (*this)(name + ".bias")};
  }
  FfnWeights Ffn(const std::string& layer) const {
    return {(*this)(layer + "fc1.weight"), (*this)(layer + "fc1.bias"),
            (*this)(layer + "fc2.weight"), (*this)(layer + "fc2.bias")};
  }

 private:
  const TensorMap& tensors_;
  const uint8_t* data_;
};

}  // namespace

Status BindModel(const ModelFileView& file, Model::Impl* impl) {
  const schema::Model& m = *file.model;
  const schema::ModelConfig* c = m.config();
  if (c == nullptr) return InvalidModel("the model has no config table");

  HW_ASSIGN_OR_RETURN(const ModelConfig layout, ConfigFromSchema(*c));
  HW_ASSIGN_OR_RETURN(std::vector<BlockLayout> blocks, BlocksFromSchema(m));
  HW_RETURN_IF_ERROR(ValidateLayout(layout, blocks));
  if (c->max_position_embeddings() == 0) {
    return InvalidModel("config: max_position_embeddings must be > 0");
  }
  if (!(c->layer_norm_eps() > 0.0f) || !std::isfinite(c->layer_norm_eps())) {
    return InvalidModel("config: layer_norm_eps must be finite and > 0, found " +
                        std::to_string(c->layer_norm_eps()));
  }
  // The kernels index with int; keep every dimension well inside that range.
  constexpr uint32_t kMaxDim = 1u << 24;
  for (uint32_t v : {layout.d_model, layout.vocab_size, layout.encoder_ffn_dim,
                     layout.decoder_ffn_dim, c->max_position_embeddings(),
                     layout.encoder_layers, layout.decoder_layers}) {
    if (v > kMaxDim) return InvalidModel("config: dimension " + std::to_string(v) + " is too large");
  }
  HW_RETURN_IF_ERROR(CheckSpecialId("pad_token_id", c->pad_token_id(), layout.vocab_size));
  HW_RETURN_IF_ERROR(CheckSpecialId("eos_token_id", c->eos_token_id(), layout.vocab_size));
  HW_RETURN_IF_ERROR(CheckSpecialId("unk_token_id", c->unk_token_id(), layout.vocab_size));
  HW_RETURN_IF_ERROR(
      CheckSpecialId("decoder_start_token_id", c->decoder_start_token_id(), layout.vocab_size));

  HW_ASSIGN_OR_RETURN(TensorMap tensors, MatchTensors(m, ExpectedTensors(layout, blocks)));
  const WeightBinder bind(tensors, file.data);

  impl->config = layout;
  const ModelConfig& d = impl->config;

  if (layout.share_encoder_decoder_embeddings) {
    impl->encoder_embed = impl->decoder_embed = bind("model.shared.weight");
  } else {
    impl->encoder_embed = bind("model.encoder.embed_tokens.weight");
    impl->decoder_embed = bind("model.decoder.embed_tokens.weight");
  }
  impl->lm_head = layout.tie_word_embeddings ? impl->decoder_embed : bind("lm_head.weight");
  impl->final_logits_bias = bind("final_logits_bias");

  const size_t dec_self = layout.encoder_layers;
  const size_t dec_cross = dec_self + layout.decoder_layers;
  impl->encoder_layers.resize(layout.encoder_layers);
  for (uint32_t l = 0; l < layout.encoder_layers; ++l) {
    const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
    EncoderLayerWeights& w = impl->encoder_layers[l];
    w.self_attn = bind.Attention(blocks[l]);
    w.self_attn_norm = bind.Norm(p + "self_attn_layer_norm");
    w.ffn = bind.Ffn(p);
    w.final_norm = bind.Norm(p + "final_layer_norm");
  }
  impl->decoder_layers.resize(layout.decoder_layers);
  for (uint32_t l = 0; l < layout.decoder_layers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    DecoderLayerWeights& w = impl->decoder_layers[l];
    w.self_attn = bind.Attention(blocks[dec_self + l]);
    w.self_attn_norm = bind.Norm(p + "self_attn_layer_norm");
    w.cross_attn = bind.Attention(blocks[dec_cross + l]);
    w.cross_attn_norm = bind.Norm(p + "encoder_attn_layer_norm");
    w.ffn = bind.Ffn(p);
    w.final_norm = bind.Norm(p + "final_layer_norm");
  }

  ModelInfo& info = impl->info;
  info.d_model = static_cast<int>(d.d_model);
  info.encoder_layers = static_cast<int>(d.encoder_layers);
  info.decoder_layers = static_cast<int>(d.decoder_layers);
  info.encoder_ffn_dim = static_cast<int>(d.encoder_ffn_dim);
  info.decoder_ffn_dim = static_cast<int>(d.decoder_ffn_dim);
  info.vocab_size = static_cast<int>(d.vocab_size);
  info.max_position_embeddings = static_cast<int>(d.max_position_embeddings);
  info.pad_token_id = d.pad_token_id;
  info.eos_token_id = d.eos_token_id;
  info.unk_token_id = d.unk_token_id;
  info.decoder_start_token_id = d.decoder_start_token_id;
  info.activation = ActivationName(d.activation);
  info.attention.clear();
  for (const BlockLayout& b : blocks) {
    AttentionBlockInfo a;
    a.kind = b.kind;
    a.layer = static_cast<int>(b.layer);
    a.num_heads = static_cast<int>(b.num_heads);
    a.original_num_heads = static_cast<int>(b.original_num_heads);
    a.head_dim = static_cast<int>(b.head_dim);
    a.name = BlockPrefix(b.kind, b.layer);
    a.kept_heads.assign(b.kept_heads.begin(), b.kept_heads.end());
    info.attention.push_back(std::move(a));
  }
  info.weight_bytes = file.data_size;

  HW_ASSIGN_OR_RETURN(const std::optional<ShortlistFromFile> shortlist,
                      ShortlistFromSchema(m, layout.vocab_size));
  impl->has_shortlist = shortlist.has_value();
  if (shortlist.has_value()) {
    impl->shortlist = shortlist->view;
    impl->shortlist_stats = shortlist->stats;
    info.has_shortlist = true;
    info.shortlist_frequent = static_cast<int>(shortlist->view.num_frequent);
    info.shortlist_sources = static_cast<int>(shortlist->stats.sources);
    info.shortlist_longest = static_cast<int>(shortlist->stats.longest);
    info.shortlist_entries = shortlist->view.num_targets;
    info.shortlist_description = std::string(shortlist->view.description);
  }
  return DescribeModel(m, blocks, &info);
}

}  // namespace headwise
