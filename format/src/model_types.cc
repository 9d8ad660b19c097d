#include "format/model_types.h"

namespace headwise {
namespace {

template <typename E>
struct Named {
  E value;
  const char* name;
};

constexpr Named<Activation> kActivations[] = {
    {Activation::kRelu, "relu"}, {Activation::kSwish, "swish"}, {Activation::kGelu, "gelu"}};
constexpr Named<DType> kDTypes[] = {{DType::kF32, "F32"}, {DType::kF16, "F16"}, {DType::kI8, "I8"}};
constexpr Named<WeightFormat> kWeightFormats[] = {
    {WeightFormat::kF32, "fp32"}, {WeightFormat::kF16, "fp16"}, {WeightFormat::kI8, "int8"}};
constexpr Named<AttentionKind> kAttentionKinds[] = {{AttentionKind::kEncoderSelf, "encoder_self"},
                                                    {AttentionKind::kDecoderSelf, "decoder_self"},
                                                    {AttentionKind::kDecoderCross, "decoder_cross"}};
constexpr Named<GateRule> kGateRules[] = {{GateRule::kHard, "hard"},
                                          {GateRule::kContinuous, "continuous"}};

template <typename E, size_t N>
const char* NameOf(const Named<E> (&table)[N], E value) {
  for (const Named<E>& n : table) {
    if (n.value == value) return n.name;
  }
  return "unknown";
}

template <typename E, size_t N>
bool Parse(const Named<E> (&table)[N], const std::string& name, E* out) {
  for (const Named<E>& n : table) {
    if (name == n.name) {
      *out = n.value;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* ActivationName(Activation a) { return NameOf(kActivations, a); }
const char* DTypeName(DType t) { return NameOf(kDTypes, t); }
const char* WeightFormatName(WeightFormat f) { return NameOf(kWeightFormats, f); }
const char* AttentionKindJsonName(AttentionKind kind) { return NameOf(kAttentionKinds, kind); }
const char* GateRuleName(GateRule r) { return NameOf(kGateRules, r); }

bool ParseActivation(const std::string& name, Activation* out) {
  return Parse(kActivations, name, out);
}
bool ParseWeightFormat(const std::string& name, WeightFormat* out) {
  return Parse(kWeightFormats, name, out);
}
bool ParseGateRule(const std::string& name, GateRule* out) { return Parse(kGateRules, name, out); }

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kI8: return 1;
  }
  return 0;
}

DType MatrixDType(WeightFormat f) {
  switch (f) {
    case WeightFormat::kF32: return DType::kF32;
    case WeightFormat::kF16: return DType::kF16;
    case WeightFormat::kI8: return DType::kI8;
  }
  return DType::kF32;
}

}  // namespace headwise
