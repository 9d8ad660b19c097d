// format/model_types.h: one definition of each kind of value a headwise model is described
// with, with its names: the activation, how a tensor is stored (DType) and the weight formats
// of `headwise-convert --weights`. The schema's enums (schema/headwise.fbs) carry the same
// values; format/schema_map.h converts between the two, nowhere else does.
//
// Adding an activation: a value here and its name in kActivations (model_types.cc), the value
// in the schema's enum under the same name (schema_map.cc maps the two by name), and the kernel
// with its case in runtime/src/kernels/activation.cc; the trainer's model/config.py
// (docs/ARCHITECTURE.md lists the files).
#ifndef HEADWISE_FORMAT_MODEL_TYPES_H_
#define HEADWISE_FORMAT_MODEL_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "headwise/model_types.hpp"  // AttentionKind

namespace headwise {

enum class Activation : uint8_t { kRelu = 0, kSwish = 1, kGelu = 2 };

// How a tensor's values are stored in the file (schema DType).
//   kF32: as given.
//   kF16: IEEE binary16, rounded to nearest even; |value| must be <= 65504.
//   kI8:  2-D only; symmetric per output channel (row r): scale[r] = max_j |v[r, j]| / 127
//         (1 for an all-zero row), q = round(v / scale[r]) in [-127, 127]; the file holds q
//         and the row scales (Tensor.quantization, axis 0, no zero point).
enum class DType : uint8_t { kF32 = 0, kF16 = 1, kI8 = 2 };

// The weight formats of `headwise-convert --weights`: the dtype of the weight matrices
// (attention q/k/v/out, fc1, fc2, embeddings, lm_head); biases, LayerNorm parameters and
// final_logits_bias stay F32 in every format (format/weight_format.h applies it). A new format
// is a value here and in DType, a row in model_types.cc's tables, and the files
// docs/ARCHITECTURE.md lists (writer, validation, the runtime's check and WeightView::WidenRow).
enum class WeightFormat : uint8_t { kF32 = 0, kF16 = 1, kI8 = 2 };

// The test-time rule of a checkpoint's Hard Concrete head gates (trainer model/gates.py):
//   kHard:       a head is kept when log_alpha > 0, unscaled.
//   kContinuous: the gate is g = clamp(sigmoid(log_alpha) * 1.2 - 0.1, 0, 1); a head is kept
//                when g > 0 and its out_proj columns are multiplied by g.
enum class GateRule : uint8_t { kHard = 0, kContinuous = 1 };

// "relu", "swish", "gelu"; "unknown" for a value outside the enum.
const char* ActivationName(Activation a);
// "F32", "F16", "I8" (the schema's names); "unknown" outside the enum.
const char* DTypeName(DType t);
// "fp32", "fp16", "int8"; "unknown" outside the enum.
const char* WeightFormatName(WeightFormat f);
// "hard", "continuous"; "unknown" outside the enum.
const char* GateRuleName(GateRule r);
// "encoder_self", "decoder_self", "decoder_cross": the kind's name in JSON documents (inspect
// reports, the trainer's analysis.json); "unknown" for a value outside the enum.
const char* AttentionKindJsonName(AttentionKind kind);

// "relu, swish, gelu": every activation's name, for messages.
std::string ActivationNames();

// The inverse of the names above; false (and *out untouched) for any other string.
bool ParseActivation(const std::string& name, Activation* out);
bool ParseWeightFormat(const std::string& name, WeightFormat* out);
bool ParseGateRule(const std::string& name, GateRule* out);

// Bytes per element; 0 for a value outside the enum.
size_t DTypeSize(DType t);
// The dtype a format stores its weight matrices in.
DType MatrixDType(WeightFormat f);
// The inverse: the format whose matrices are `matrices`; false when none is.
bool WeightFormatOfMatrices(DType matrices, WeightFormat* out);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_MODEL_TYPES_H_
