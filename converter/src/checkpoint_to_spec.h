// converter/src/checkpoint_to_spec.h: turns a read checkpoint into the ModelSpec the writer
// takes: decides the kept heads, strips the closed ones, and accounts for every tensor.
//
// Heads: a block's gate `<block>.head_gate.log_alpha` (shape [source heads]) keeps the heads
// whose test-time gate under `rule` (default: the checkpoint's headwise_gate_rule) is above 0:
// hard, log_alpha > 0; continuous, clamp(sigmoid(log_alpha) * 1.2 - 0.1, 0, 1) > 0, and then
// each kept head's out_proj columns are multiplied by that gate. A block without gate keeps all
// heads; `keep_heads` (may be null) overrides per block, and then no gate is folded (the spec's
// heads are kept as they are, as the trainer's prune-eval --keep-heads evaluates them).
// Stripping keeps the kept heads' rows of q/k/v_proj weight and bias and the matching columns
// of out_proj.weight; a block with zero heads keeps only out_proj.bias. The spec records the
// rule (ModelSpec::gate_rule) when the checkpoint has gates.
//
// Embeddings: shared -> model.shared.weight (fallback model.encoder.embed_tokens.weight, then
// model.decoder.embed_tokens.weight); unshared -> both embed_tokens; untied -> lm_head.weight
// required. final_logits_bias absent -> zeros (as Hugging Face loads it).
// Accepted duplicates (checked, then dropped): embed_tokens copies of a shared embedding and a
// tied lm_head.weight (must equal what they duplicate), and the sinusoidal position tables
// model.{encoder,decoder}.embed_positions.weight (must match sinusoids.h within 1e-3; the
// runtime recomputes them). Any other tensor not used is an error.
//
// Errors (kInvalidCheckpoint) name model.safetensors, the tensor or block, expected and found;
// kInvalidArgument for a keep-heads spec that does not fit the config.
#ifndef HEADWISE_CONVERTER_CHECKPOINT_TO_SPEC_H_
#define HEADWISE_CONVERTER_CHECKPOINT_TO_SPEC_H_

#include <optional>
#include <string>

#include "converter/src/checkpoint_reader.h"
#include "converter/src/keep_heads.h"
#include "format/model_writer.h"
#include "headwise/status.hpp"

namespace headwise::convert {

inline constexpr char kGateSuffix[] = ".head_gate.log_alpha";

// The spec is complete (tensors, tokenizer, provenance) and passes ValidateModelSpec.
Result<ModelSpec> CheckpointToSpec(const Checkpoint& checkpoint, const KeepHeadsSpec* keep_heads,
                                   std::optional<GateRule> rule = std::nullopt);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_CHECKPOINT_TO_SPEC_H_
