#include "format/schema_map.h"

#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace headwise {
namespace sc = ::headwise::schema;
namespace {

// The schema's value names and the format library's, compared without case and underscores:
// Relu = "relu", Swish = "swish", F16 = "F16", a future GeluTanh = "gelu_tanh".
std::string NameKey(const char* name) {
  std::string key;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
  }
  return key;
}

// The schema's and the format library's enum of one concept, matched by name (NameKey) once:
// schema value -> format value and back, indexed by the one-byte underlying value (a value
// outside either enum maps to nothing).
template <typename S, typename F>
class EnumMap {
 public:
  template <size_t N>
  EnumMap(const S (&schema_values)[N], const char* (*schema_name)(S),
          const char* (*format_name)(F)) {
    for (S s : schema_values) {
      const std::string key = NameKey(schema_name(s));
      for (int i = 0; i < 256; ++i) {
        const F f = static_cast<F>(i);
        if (NameKey(format_name(f)) == key) {
          to_format_[Index(s)] = f;
          to_schema_[Index(f)] = s;
        }
      }
    }
  }
  std::optional<F> Format(S s) const { return to_format_[Index(s)]; }
  std::optional<S> Schema(F f) const { return to_schema_[Index(f)]; }

 private:
  template <typename E>
  static size_t Index(E e) {
    return static_cast<uint8_t>(e);
  }
  std::array<std::optional<F>, 256> to_format_{};
  std::array<std::optional<S>, 256> to_schema_{};
};

const EnumMap<sc::DType, DType>& DTypes() {
  static const EnumMap<sc::DType, DType> map(sc::EnumValuesDType(), sc::EnumNameDType,
                                             DTypeName);
  return map;
}

const EnumMap<sc::Activation, Activation>& Activations() {
  static const EnumMap<sc::Activation, Activation> map(sc::EnumValuesActivation(),
                                                       sc::EnumNameActivation, ActivationName);
  return map;
}

}  // namespace

// DType and Activation map by name (NameKey): a value added to both enums under one name needs
// no code here. AttentionKind's names differ (EncoderSelf vs encoder_self by design of the JSON
// names), so it keeps its switch.
Result<DType> FromSchema(sc::DType t) {
  if (std::optional<DType> d = DTypes().Format(t)) return *d;
  return InvalidModel("unknown dtype " + std::to_string(static_cast<int>(t)));
}

Result<Activation> FromSchema(sc::Activation a) {
  if (std::optional<Activation> f = Activations().Format(a)) return *f;
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

sc::DType ToSchema(DType t) { return DTypes().Schema(t).value_or(sc::DType::F32); }

sc::Activation ToSchema(Activation a) {
  return Activations().Schema(a).value_or(sc::Activation::Swish);
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

Result<ModelNotes> NotesFromSchema(const sc::Model& m, const std::vector<BlockLayout>& blocks) {
  const auto str = [](const flatbuffers::String* v) {
    return v != nullptr ? v->str() : std::string();
  };
  const auto* attention = m.attention();
  const size_t count = attention != nullptr ? attention->size() : 0;
  if (count != blocks.size()) {
    return InvalidModel(std::to_string(count) + " attention blocks in the file, " +
                        std::to_string(blocks.size()) + " described");
  }
  ModelNotes notes;
  notes.gate_log_alpha.resize(count);
  notes.head_analysis.resize(count);
  for (flatbuffers::uoffset_t i = 0; i < count; ++i) {
    const sc::AttentionBlock* a = attention->Get(i);
    const BlockLayout& b = blocks[i];
    const std::string where = BlockDescription(b.kind, b.layer);
    if (a == nullptr) return InvalidModel(where + " is missing");
    const size_t heads = b.original_num_heads;
    if (const auto* gates = a->gate_log_alpha(); gates != nullptr && gates->size() != 0) {
      if (gates->size() != heads) {
        return InvalidModel(where + ": " + std::to_string(gates->size()) + " gate values for " +
                            std::to_string(heads) + " source heads");
      }
      notes.gate_log_alpha[i].assign(gates->begin(), gates->end());
    }
    const auto* analysis = a->analysis();
    if (analysis == nullptr || analysis->size() == 0) continue;
    if (analysis->size() != heads) {
      return InvalidModel(where + ": analysis of " + std::to_string(analysis->size()) +
                          " heads for " + std::to_string(heads) + " source heads");
    }
    std::vector<HeadAnalysisSpec>& out = notes.head_analysis[i];
    out.reserve(heads);
    for (flatbuffers::uoffset_t h = 0; h < analysis->size(); ++h) {
      const sc::HeadAnalysis* e = analysis->Get(h);
      if (e == nullptr || e->source_head() != h) {
        return InvalidModel(where + ": analysis entry " + std::to_string(h) +
                            " is not for source head " + std::to_string(h));
      }
      HeadAnalysisSpec spec;
      spec.source_head = h;
      spec.relevance = e->relevance();
      spec.confidence = e->confidence();
      spec.michel = e->michel();
      if (const auto* roles = e->roles(); roles != nullptr) {
        for (const flatbuffers::String* r : *roles) spec.roles.push_back(str(r));
      }
      out.push_back(std::move(spec));
    }
  }
  if (const sc::AnalysisInfo* info = m.analysis(); info != nullptr) {
    notes.analysis_info = AnalysisInfoSpec{str(info->relevance_rule()), str(info->data()),
                                           str(info->analysis_sha256())};
  }
  if (const sc::Provenance* p = m.provenance(); p != nullptr) {
    notes.source_checkpoint_sha256 = str(p->source_checkpoint_sha256());
    notes.source_checkpoint_name = str(p->source_checkpoint_name());
    notes.converter_version = str(p->converter_version());
    notes.keep_heads_spec = str(p->keep_heads_spec());
    notes.source_dtype = str(p->source_dtype());
    const std::string rule = str(p->gate_rule());
    if (!rule.empty() && !ParseGateRule(rule, &notes.gate_rule)) {
      return InvalidModel("provenance gate_rule: expected hard or continuous, found '" + rule +
                          "'");
    }
  }
  return notes;
}

Result<std::optional<WeightFormat>> WeightFormatFromSchema(const sc::Model& m) {
  std::optional<DType> found;
  if (const auto* tensors = m.tensors(); tensors != nullptr) {
    for (const sc::Tensor* t : *tensors) {
      if (t == nullptr || t->shape() == nullptr || t->shape()->size() != 2) continue;
      if (t->name() != nullptr && t->name()->string_view() == "final_logits_bias") continue;
      Result<DType> dtype = FromSchema(t->dtype());
      if (!dtype.ok()) {
        return dtype.status().WithContext(t->name() != nullptr ? t->name()->str() : "a tensor");
      }
      if (found.has_value() && *found != *dtype) return std::optional<WeightFormat>();
      found = *dtype;
    }
  }
  if (!found.has_value()) return std::optional<WeightFormat>(WeightFormat::kF32);
  WeightFormat format = WeightFormat::kF32;
  if (WeightFormatOfMatrices(*found, &format)) return std::optional<WeightFormat>(format);
  return std::optional<WeightFormat>();
}

Result<std::optional<ShortlistFromFile>> ShortlistFromSchema(const sc::Model& m,
                                                             uint32_t vocab_size) {
  const sc::Shortlist* l = m.shortlist();
  if (l == nullptr) return std::optional<ShortlistFromFile>();
  ShortlistFromFile out;
  ShortlistView& v = out.view;
  // The Verifier checked each vector lies inside the buffer; [uint] data is little-endian
  // uint32 (the format is little-endian only, model_file.h).
  if (const auto* f = l->frequent(); f != nullptr) {
    v.frequent = f->data();
    v.num_frequent = f->size();
  }
  if (const auto* o = l->offsets(); o != nullptr) {
    v.offsets = o->data();
    v.num_offsets = o->size();
  }
  if (const auto* t = l->targets(); t != nullptr) {
    v.targets = t->data();
    v.num_targets = t->size();
  }
  if (const flatbuffers::String* d = l->description(); d != nullptr) {
    v.description = d->string_view();
  }
  v.vocab = vocab_size;
  HW_ASSIGN_OR_RETURN(out.stats, CheckShortlist(v, ErrorCode::kInvalidModel));
  return std::optional<ShortlistFromFile>(out);
}

}  // namespace headwise
