// ValidateModelSpec (format/model_ir.h): everything a ModelSpec must satisfy before a byte is
// written. Kept apart from the serializer so the rules read as one list.
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "format/model_ir.h"

namespace headwise {
namespace {

uint64_t ElementCount(const std::vector<uint32_t>& shape) {
  uint64_t n = 1;
  // Called only on shapes equal to the layout's (at most 2-D of uint32): cannot overflow.
  for (uint32_t d : shape) n *= d;
  return n;
}

Status ValidateIds(const ModelSpec& spec) {
  const int64_t vocab = spec.config.vocab_size;
  const struct {
    const char* name;
    int32_t id;
  } ids[] = {{"pad_token_id", spec.config.pad_token_id},
             {"eos_token_id", spec.config.eos_token_id},
             {"decoder_start_token_id", spec.config.decoder_start_token_id},
             {"unk_token_id", spec.config.unk_token_id}};
  for (const auto& id : ids) {
    if (id.id < 0 || id.id >= vocab) {
      return InvalidCheckpoint(std::string("config: ") + id.name + ": expected an id in [0, " +
                               std::to_string(vocab) + "), found " + std::to_string(id.id));
    }
  }
  return Status::Ok();
}

Status ValidateScalars(const ModelSpec& spec) {
  if (spec.config.max_position_embeddings == 0) {
    return InvalidCheckpoint("config: max_position_embeddings: expected > 0, found 0");
  }
  if (!(std::isfinite(spec.config.layer_norm_eps) && spec.config.layer_norm_eps > 0.0f)) {
    return InvalidCheckpoint("config: layer_norm_eps: expected a finite value > 0, found " +
                             std::to_string(spec.config.layer_norm_eps));
  }
  Activation known = Activation::kSwish;
  if (ParseActivation(ActivationName(spec.config.activation), &known)) return Status::Ok();
  return InvalidCheckpoint("config: activation: unknown value " +
                           std::to_string(static_cast<int>(spec.config.activation)));
}

Status ValidateGates(const ModelSpec& spec) {
  if (spec.gate_log_alpha.empty()) return Status::Ok();
  if (spec.gate_log_alpha.size() != spec.blocks.size()) {
    return InvalidCheckpoint("gate_log_alpha: expected one entry per attention block (" +
                             std::to_string(spec.blocks.size()) + "), found " +
                             std::to_string(spec.gate_log_alpha.size()));
  }
  for (size_t i = 0; i < spec.blocks.size(); ++i) {
    const BlockLayout& b = spec.blocks[i];
    const std::vector<float>& gate = spec.gate_log_alpha[i];
    const std::string where = BlockPrefix(b.kind, b.layer) + ".head_gate.log_alpha";
    if (gate.empty()) continue;
    if (gate.size() != b.original_num_heads) {
      return InvalidCheckpoint(where + ": expected [" + std::to_string(b.original_num_heads) +
                               "], found [" + std::to_string(gate.size()) + "]");
    }
    for (size_t h = 0; h < gate.size(); ++h) {
      if (!std::isfinite(gate[h])) {
        return InvalidCheckpoint(where + ": head " + std::to_string(h) +
                                 ": expected a finite value, found " + std::to_string(gate[h]));
      }
    }
  }
  return Status::Ok();
}

Status ValidateHeadAnalysis(const ModelSpec& spec) {
  if (spec.head_analysis.empty()) return Status::Ok();
  if (spec.head_analysis.size() != spec.blocks.size()) {
    return InvalidCheckpoint("head analysis: expected one entry per attention block (" +
                             std::to_string(spec.blocks.size()) + "), found " +
                             std::to_string(spec.head_analysis.size()));
  }
  for (size_t i = 0; i < spec.blocks.size(); ++i) {
    const BlockLayout& b = spec.blocks[i];
    const std::vector<HeadAnalysisSpec>& heads = spec.head_analysis[i];
    const std::string where = "head analysis of " + BlockDescription(b.kind, b.layer);
    if (heads.size() != b.original_num_heads) {
      return InvalidCheckpoint(where + ": expected " + std::to_string(b.original_num_heads) +
                               " heads, found " + std::to_string(heads.size()));
    }
    for (size_t h = 0; h < heads.size(); ++h) {
      if (heads[h].source_head != h) {
        return InvalidCheckpoint(where + ": entry " + std::to_string(h) + " is for head " +
                                 std::to_string(heads[h].source_head));
      }
    }
  }
  return Status::Ok();
}

// The requested storage type can hold the tensor (format/model_types.h DType).
Status ValidateDType(const TensorSpec& t) {
  switch (t.dtype) {
    case DType::kF32:
      return Status::Ok();
    case DType::kF16:
      for (size_t i = 0; i < t.data.size(); ++i) {
        if (std::fabs(t.data[i]) > 65504.0f) {
          return InvalidCheckpoint(t.name + ": F16 cannot hold " + std::to_string(t.data[i]) +
                                   " at flat index " + std::to_string(i) +
                                   " (largest finite F16 is 65504); use --weights fp32");
        }
      }
      return Status::Ok();
    case DType::kI8:
      if (t.shape.size() != 2) {
        return InvalidCheckpoint(t.name + ": I8 (per-row scales) needs a 2-D tensor, found " +
                                 ShapeToString(t.shape));
      }
      return Status::Ok();
  }
  return InvalidCheckpoint(t.name + ": unknown dtype " +
                           std::to_string(static_cast<int>(t.dtype)));
}

Status ValidateTensors(const ModelSpec& spec) {
  const std::vector<ExpectedTensor> expected = ExpectedTensors(spec.config, spec.blocks);
  std::unordered_map<std::string, const ExpectedTensor*> by_name;
  for (const ExpectedTensor& e : expected) by_name.emplace(e.name, &e);

  std::unordered_set<std::string> seen;
  for (const TensorSpec& t : spec.tensors) {
    auto it = by_name.find(t.name);
    if (it == by_name.end()) {
      return InvalidCheckpoint(t.name + ": not a tensor of this model layout (unknown name, or "
                               "a tensor the layout does not hold, e.g. q_proj of a block "
                               "with zero kept heads)");
    }
    if (!seen.insert(t.name).second) {
      return InvalidCheckpoint(t.name + ": given more than once");
    }
    if (t.shape != it->second->shape) {
      return InvalidCheckpoint(t.name + ": expected " + ShapeToString(it->second->shape) +
                               ", found " + ShapeToString(t.shape));
    }
    const uint64_t count = ElementCount(t.shape);
    if (t.data.size() != count) {
      return InvalidCheckpoint(t.name + ": expected " + std::to_string(count) +
                               " values for shape " + ShapeToString(t.shape) + ", found " +
                               std::to_string(t.data.size()));
    }
    for (size_t i = 0; i < t.data.size(); ++i) {
      if (!std::isfinite(t.data[i])) {
        return InvalidCheckpoint(t.name + ": expected finite values, found " +
                                 std::to_string(t.data[i]) + " at flat index " +
                                 std::to_string(i));
      }
    }
    HW_RETURN_IF_ERROR(ValidateDType(t));
  }
  for (const ExpectedTensor& e : expected) {
    if (seen.find(e.name) == seen.end()) {
      return InvalidCheckpoint(e.name + ": missing (expected shape " + ShapeToString(e.shape) +
                               ")");
    }
  }
  return Status::Ok();
}

Status ValidateTokenizer(const ModelSpec& spec) {
  const bool none = spec.source_spm.empty() && spec.target_spm.empty() && spec.vocab.empty();
  if (none) return Status::Ok();
  if (spec.source_spm.empty() || spec.target_spm.empty()) {
    return InvalidCheckpoint(std::string("tokenizer: expected both SentencePiece models or "
                                         "none, found ") +
                             (spec.source_spm.empty() ? "no" : "a") + " source model and " +
                             (spec.target_spm.empty() ? "no" : "a") + " target model");
  }
  if (spec.vocab.size() != spec.config.vocab_size) {
    return InvalidCheckpoint("tokenizer: vocab: expected " +
                             std::to_string(spec.config.vocab_size) +
                             " pieces (vocab_size), found " + std::to_string(spec.vocab.size()));
  }
  return Status::Ok();
}

Status ValidateShortlist(const ModelSpec& spec) {
  if (spec.shortlist.empty()) return Status::Ok();
  return CheckShortlist(ViewOf(spec.shortlist, spec.config.vocab_size),
                        ErrorCode::kInvalidCheckpoint)
      .status();
}

}  // namespace

Status ValidateModelSpec(const ModelSpec& spec) {
  const Status layout = ValidateLayout(spec.config, spec.blocks);
  if (!layout.ok()) return InvalidCheckpoint(layout.message());
  HW_RETURN_IF_ERROR(ValidateScalars(spec));
  HW_RETURN_IF_ERROR(ValidateIds(spec));
  HW_RETURN_IF_ERROR(ValidateGates(spec));
  HW_RETURN_IF_ERROR(ValidateHeadAnalysis(spec));
  HW_RETURN_IF_ERROR(ValidateTensors(spec));
  HW_RETURN_IF_ERROR(ValidateTokenizer(spec));
  HW_RETURN_IF_ERROR(ValidateShortlist(spec));
  return Status::Ok();
}

}  // namespace headwise
