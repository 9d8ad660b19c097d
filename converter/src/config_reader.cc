#include "converter/src/config_reader.h"

#include "converter/src/json_util.h"

namespace headwise::convert {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& root, const std::string& where) : root_(root), where_(where) {}

  // A required integer in [lo, hi].
  Status Int(const char* key, int64_t lo, int64_t hi, int64_t* out) const {
    if (!root_.contains(key)) {
      return InvalidCheckpoint(where_ + ": missing key '" + key + "' (an integer in [" +
                               std::to_string(lo) + ", " + std::to_string(hi) + "])");
    }
    const json& v = root_[key];
    if (!JsonToInt(v, lo, hi, out)) {
      return InvalidCheckpoint(where_ + ": " + key + ": expected an integer in [" +
                               std::to_string(lo) + ", " + std::to_string(hi) + "], found " +
                               v.dump());
    }
    return Status::Ok();
  }
  Status Positive(const char* key, uint32_t* out) const {
    int64_t v = 0;
    HW_RETURN_IF_ERROR(Int(key, 1, UINT32_MAX, &v));
    *out = static_cast<uint32_t>(v);
    return Status::Ok();
  }
  Status Id(const char* key, uint32_t vocab_size, int32_t* out) const {
    int64_t v = 0;
    HW_RETURN_IF_ERROR(Int(key, 0, static_cast<int64_t>(vocab_size) - 1, &v));
    *out = static_cast<int32_t>(v);
    return Status::Ok();
  }
  // An optional boolean, `fallback` when absent.
  Status Bool(const char* key, bool fallback, bool* out) const {
    *out = fallback;
    if (!root_.contains(key)) return Status::Ok();
    const json& v = root_[key];
    if (!v.is_boolean()) {
      return InvalidCheckpoint(where_ + ": " + key + ": expected true or false, found " +
                               v.dump());
    }
    *out = v.get<bool>();
    return Status::Ok();
  }

 private:
  const json& root_;
  const std::string& where_;
};

Status ReadActivation(const json& root, const std::string& where, Activation* out) {
  if (!root.contains("activation_function")) {
    return InvalidCheckpoint(where + ": missing key 'activation_function' (" +
                             headwise::ActivationNames() + " or silu)");
  }
  const json& v = root["activation_function"];
  const std::string name = v.is_string() ? v.get<std::string>() : v.dump();
  // Hugging Face's "silu" is PyTorch's name for swish.
  if (!headwise::ParseActivation(name == "silu" ? "swish" : name, out)) {
    return InvalidCheckpoint(where + ": activation_function: unsupported activation '" + name +
                             "'; expected " + headwise::ActivationNames() + " or silu (swish)");
  }
  return Status::Ok();
}

Status CheckCompatibility(const json& root, const std::string& where, uint32_t vocab_size) {
  if (root.contains("model_type") && root["model_type"] != "marian") {
    return InvalidCheckpoint(where + ": model_type: expected \"marian\", found " +
                             root["model_type"].dump());
  }
  if (root.contains("decoder_vocab_size") && !root["decoder_vocab_size"].is_null()) {
    int64_t v = 0;
    if (!JsonToInt(root["decoder_vocab_size"], 0, INT64_MAX, &v) || v != vocab_size) {
      return InvalidCheckpoint(where + ": decoder_vocab_size: expected " +
                               std::to_string(vocab_size) + " (= vocab_size; separate target "
                               "vocabularies are not supported), found " +
                               root["decoder_vocab_size"].dump());
    }
  }
  return Status::Ok();
}

}  // namespace

Result<GateRule> ParseGateRuleKey(std::string_view json_text, const std::string& where) {
  HW_ASSIGN_OR_RETURN(json root, ParseJsonStrict(json_text, where));
  GateRule rule = GateRule::kHard;
  if (!root.is_object() || !root.contains(kGateRuleKey)) return rule;
  const json& v = root[kGateRuleKey];
  if (!v.is_string() || !ParseGateRule(v.get<std::string>(), &rule)) {
    return InvalidCheckpoint(where + ": " + kGateRuleKey + ": expected \"hard\" or "
                             "\"continuous\" (the test-time rule of the head gates), found " +
                             v.dump());
  }
  return rule;
}

Result<ModelConfig> ParseMarianConfig(std::string_view json_text, const std::string& where) {
  HW_ASSIGN_OR_RETURN(json root, ParseJsonStrict(json_text, where));
  if (!root.is_object()) {
    return InvalidCheckpoint(where + ": expected a JSON object, found " + JsonTypeName(root));
  }
  const Reader r(root, where);
  ModelConfig c;
  ModelConfig& l = c;
  HW_RETURN_IF_ERROR(r.Positive("d_model", &l.d_model));
  HW_RETURN_IF_ERROR(r.Positive("encoder_layers", &l.encoder_layers));
  HW_RETURN_IF_ERROR(r.Positive("decoder_layers", &l.decoder_layers));
  HW_RETURN_IF_ERROR(r.Positive("encoder_attention_heads", &l.encoder_attention_heads));
  HW_RETURN_IF_ERROR(r.Positive("decoder_attention_heads", &l.decoder_attention_heads));
  HW_RETURN_IF_ERROR(r.Positive("encoder_ffn_dim", &l.encoder_ffn_dim));
  HW_RETURN_IF_ERROR(r.Positive("decoder_ffn_dim", &l.decoder_ffn_dim));
  HW_RETURN_IF_ERROR(r.Positive("vocab_size", &l.vocab_size));
  HW_RETURN_IF_ERROR(r.Positive("max_position_embeddings", &c.max_position_embeddings));
  HW_RETURN_IF_ERROR(r.Id("pad_token_id", l.vocab_size, &c.pad_token_id));
  HW_RETURN_IF_ERROR(r.Id("eos_token_id", l.vocab_size, &c.eos_token_id));
  HW_RETURN_IF_ERROR(r.Id("decoder_start_token_id", l.vocab_size, &c.decoder_start_token_id));
  HW_RETURN_IF_ERROR(ReadActivation(root, where, &c.activation));
  HW_RETURN_IF_ERROR(r.Bool("scale_embedding", false, &c.scale_embedding));
  HW_RETURN_IF_ERROR(
      r.Bool("share_encoder_decoder_embeddings", true, &l.share_encoder_decoder_embeddings));
  HW_RETURN_IF_ERROR(r.Bool("tie_word_embeddings", true, &l.tie_word_embeddings));
  bool normalize_before = false;
  HW_RETURN_IF_ERROR(r.Bool("normalize_before", false, &normalize_before));
  if (normalize_before) {
    return InvalidCheckpoint(where + ": normalize_before: true (pre-LayerNorm layers) is not "
                             "supported; MarianMT / OPUS-MT layers are post-LayerNorm (false)");
  }
  HW_RETURN_IF_ERROR(CheckCompatibility(root, where, l.vocab_size));
  for (const auto& [key, heads] : {std::pair<const char*, uint32_t>{"encoder_attention_heads",
                                                                     l.encoder_attention_heads},
                                   {"decoder_attention_heads", l.decoder_attention_heads}}) {
    if (l.d_model % heads != 0) {
      return InvalidCheckpoint(where + ": " + key + ": expected a divisor of d_model " +
                               std::to_string(l.d_model) + ", found " + std::to_string(heads));
    }
  }
  if (l.d_model % 2 != 0) {
    return InvalidCheckpoint(where + ": d_model: expected an even value (the sinusoidal "
                             "positions use sin and cos halves), found " +
                             std::to_string(l.d_model));
  }
  return c;
}

}  // namespace headwise::convert
