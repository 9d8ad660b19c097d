#include "format/model_types.h"

namespace headwise {
namespace {

// One row per value: its name and what else is known about it. Adding a value is adding a row
// (and the enum value in model_types.h); nothing else in this file lists values.
template <typename E>
struct Named {
  E value;
  const char* name;
};

struct DTypeInfo {
  DType value;
  const char* name;
  size_t size;  // bytes per element
};

struct WeightFormatInfo {
  WeightFormat value;
  const char* name;
  DType matrix;  // how the format stores the weight matrices
};

constexpr Named<Activation> kActivations[] = {
    {Activation::kRelu, "relu"}, {Activation::kSwish, "swish"}, {Activation::kGelu, "gelu"}};
constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "F32", 4}, {DType::kF16, "F16", 2}, {DType::kI8, "I8", 1}};
constexpr WeightFormatInfo kWeightFormats[] = {{WeightFormat::kF32, "fp32", DType::kF32},
                                               {WeightFormat::kF16, "fp16", DType::kF16},
                                               {WeightFormat::kI8, "int8", DType::kI8}};
constexpr Named<AttentionKind> kAttentionKinds[] = {{AttentionKind::kEncoderSelf, "encoder_self"},
                                                    {AttentionKind::kDecoderSelf, "decoder_self"},
                                                    {AttentionKind::kDecoderCross, "decoder_cross"}};
constexpr Named<GateRule> kGateRules[] = {{GateRule::kHard, "hard"},
                                          {GateRule::kContinuous, "continuous"}};

template <typename Row, size_t N, typename E>
const Row* Find(const Row (&table)[N], E value) {
  for (const Row& r : table) {
    if (r.value == value) return &r;
  }
  return nullptr;
}

template <typename Row, size_t N, typename E>
const char* NameOf(const Row (&table)[N], E value) {
  const Row* r = Find(table, value);
  return r != nullptr ? r->name : "unknown";
}

template <typename Row, size_t N, typename E>
bool Parse(const Row (&table)[N], const std::string& name, E* out) {
  for (const Row& r : table) {
    if (name == r.name) {
      *out = r.value;
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

std::string ActivationNames() {
  std::string out;
  for (const Named<Activation>& n : kActivations) {
    out += (out.empty() ? "" : ", ") + std::string(n.name);
  }
  return out;
}

bool ParseActivation(const std::string& name, Activation* out) {
  return Parse(kActivations, name, out);
}
bool ParseWeightFormat(const std::string& name, WeightFormat* out) {
  return Parse(kWeightFormats, name, out);
}
bool ParseGateRule(const std::string& name, GateRule* out) { return Parse(kGateRules, name, out); }

size_t DTypeSize(DType t) {
  const DTypeInfo* r = Find(kDTypes, t);
  return r != nullptr ? r->size : 0;
}

DType MatrixDType(WeightFormat f) {
  const WeightFormatInfo* r = Find(kWeightFormats, f);
  return r != nullptr ? r->matrix : DType::kF32;
}

bool WeightFormatOfMatrices(DType matrices, WeightFormat* out) {
  for (const WeightFormatInfo& r : kWeightFormats) {
    if (r.matrix == matrices) {
      *out = r.value;
      return true;
    }
  }
  return false;
}

}  // namespace headwise
