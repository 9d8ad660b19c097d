#include "converter/src/checkpoint_to_spec.h"

#include <cmath>
#include <map>
#include <set>

#include "converter/src/head_strip.h"
#include "converter/src/sinusoids.h"

namespace headwise::convert {
namespace {

constexpr float kPositionTolerance = 1e-3f;
constexpr size_t kMaxListedTensors = 5;

std::string ShapeString(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool SameShape(const std::vector<uint64_t>& found, const std::vector<uint32_t>& expected) {
  if (found.size() != expected.size()) return false;
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i] != expected[i]) return false;
  }
  return true;
}

// How a tensor of an attention block is stripped.
enum class HeadAxis { kNone, kRows, kColumns };

struct AttentionRole {
  size_t block;
  HeadAxis axis;
  uint32_t row_width;  // for kRows: d_model for weights, 1 for biases
  bool dropped_without_heads;
};

class Assembler {
 public:
  Assembler(const Checkpoint& c, GateRule rule)
      : c_(c), where_(c.directory + "/" + kWeightsFile), layout_(c.config), rule_(rule) {}

  Result<ModelSpec> Run(const KeepHeadsSpec* keep_heads) {
    HW_RETURN_IF_ERROR(ReadGates());
    if (keep_heads != nullptr) {
      HW_RETURN_IF_ERROR(ApplyKeepHeads(*keep_heads, layout_, &kept_));
      spec_.keep_heads_spec = keep_heads->text;
      fold_gates_ = false;
    }
    BuildBlocks();
    HW_RETURN_IF_ERROR(ReadTensors());
    HW_RETURN_IF_ERROR(CheckLeftovers());
    FillRest();
    const Status valid = ValidateModelSpec(spec_);
    if (!valid.ok()) return valid.WithContext(where_);
    return std::move(spec_);
  }

 private:
  std::string Where(const std::string& name) const { return where_ + ": " + name; }

  // Gates in canonical block order; kept_ starts as the gates' decision.
  Status ReadGates() {
    bool any_gate = false;
    std::vector<std::vector<float>> gates;
    for (AttentionKind kind : {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kDecoderCross}) {
      const uint32_t layers = kind == AttentionKind::kEncoderSelf ? layout_.encoder_layers : layout_.decoder_layers;
      const uint32_t heads = kind == AttentionKind::kEncoderSelf ? layout_.encoder_attention_heads
                                                             : layout_.decoder_attention_heads;
      for (uint32_t l = 0; l < layers; ++l) {
        const std::string name = BlockPrefix(kind, l) + kGateSuffix;
        std::vector<uint32_t> kept;
        std::vector<float> gate;
        if (const SafetensorsTensor* t = c_.weights.Find(name)) {
          if (!SameShape(t->shape, {heads})) {
            return InvalidCheckpoint(Where(name) + " (" + BlockDescription(kind, l) +
                                     "): gate of the wrong size: expected [" +
                                     std::to_string(heads) + "] (one log_alpha per head), found " +
                                     ShapeString(t->shape));
          }
          used_.insert(name);
          gate = SafetensorsToFloat(*t);
          for (uint32_t h = 0; h < heads; ++h) {
            if (!std::isfinite(gate[h])) {
              return InvalidCheckpoint(Where(name) + " (" + BlockDescription(kind, l) +
                                       "): head " + std::to_string(h) +
                                       ": expected a finite log_alpha, found " +
                                       std::to_string(gate[h]));
            }
            if (TestTimeGate(rule_, gate[h]) > 0.0f) kept.push_back(h);
          }
          any_gate = true;
        } else {
          for (uint32_t h = 0; h < heads; ++h) kept.push_back(h);
        }
        kept_.push_back(std::move(kept));
        gates.push_back(std::move(gate));
        kinds_.push_back({kind, l, heads});
      }
    }
    if (any_gate) {
      spec_.gate_log_alpha = std::move(gates);
      spec_.gate_rule = rule_;
    }
    return Status::Ok();
  }

  void BuildBlocks() {
    for (size_t i = 0; i < kinds_.size(); ++i) {
      BlockLayout b;
      b.kind = kinds_[i].kind;
      b.layer = kinds_[i].layer;
      b.original_num_heads = kinds_[i].heads;
      b.head_dim = layout_.d_model / kinds_[i].heads;
      b.kept_heads = kept_[i];
      b.num_heads = static_cast<uint32_t>(b.kept_heads.size());
      spec_.blocks.push_back(b);
      BlockLayout full = b;
      full.kept_heads.clear();
      for (uint32_t h = 0; h < full.original_num_heads; ++h) full.kept_heads.push_back(h);
      full.num_heads = full.original_num_heads;
      full_blocks_.push_back(full);

      const std::string p = BlockPrefix(b.kind, b.layer) + ".";
      for (const char* proj : {"q_proj", "k_proj", "v_proj"}) {
        roles_[p + proj + ".weight"] = {i, HeadAxis::kRows, layout_.d_model, true};
        roles_[p + proj + ".bias"] = {i, HeadAxis::kRows, 1, true};
      }
      roles_[p + "out_proj.weight"] = {i, HeadAxis::kColumns, 0, true};
    }
  }

  // The checkpoint tensor that provides model tensor `name`, or nullptr.
  const SafetensorsTensor* Source(const std::string& name) const {
    if (name == "model.shared.weight") {
      for (const char* n : {"model.shared.weight", "model.encoder.embed_tokens.weight",
                            "model.decoder.embed_tokens.weight"}) {
        if (const SafetensorsTensor* t = c_.weights.Find(n)) return t;
      }
      return nullptr;
    }
    return c_.weights.Find(name);
  }

  Status ReadTensors() {
    for (const ExpectedTensor& e : ExpectedTensors(layout_, full_blocks_)) {
      const SafetensorsTensor* t = Source(e.name);
      if (t == nullptr) {
        if (e.name == "final_logits_bias") {  // Hugging Face loads zeros when it is absent
          spec_.tensors.push_back({e.name, e.shape, std::vector<float>(layout_.vocab_size, 0.0f)});
          continue;
        }
        return InvalidCheckpoint(Where(e.name) + ": missing (expected shape " +
                                 ShapeToString(e.shape) + ")");
      }
      if (!SameShape(t->shape, e.shape)) {
        const std::string alias = t->name == e.name ? "" : " (read from " + t->name + ")";
        return InvalidCheckpoint(Where(e.name) + alias + ": expected " + ShapeToString(e.shape) +
                                 ", found " + ShapeString(t->shape));
      }
      used_.insert(t->name);
      dtypes_.insert(SafetensorsDTypeName(t->dtype));
      std::vector<float> values = SafetensorsToFloat(*t);
      std::vector<uint32_t> shape = e.shape;

      auto role = roles_.find(e.name);
      if (role != roles_.end()) {
        const BlockLayout& b = spec_.blocks[role->second.block];
        if (b.num_heads == 0) continue;  // a block without heads keeps only out_proj.bias
        const uint32_t inner = b.num_heads * b.head_dim;
        if (role->second.axis == HeadAxis::kRows) {
          values = KeepHeadRows(values, role->second.row_width, b.head_dim, b.kept_heads);
          shape[0] = inner;
        } else {
          values = KeepHeadColumns(values, layout_.d_model, b.head_dim, b.kept_heads);
          shape[1] = inner;
          const std::vector<float>& gate = spec_.gate_log_alpha.empty()
                                               ? no_gate_
                                               : spec_.gate_log_alpha[role->second.block];
          if (fold_gates_ && rule_ == GateRule::kContinuous && !gate.empty()) {
            std::vector<float> scales;
            for (uint32_t h : b.kept_heads) scales.push_back(TestTimeGate(rule_, gate[h]));
            ScaleHeadColumns(&values, layout_.d_model, b.head_dim, scales);
          }
        }
      }
      spec_.tensors.push_back({e.name, std::move(shape), std::move(values)});
    }
    return Status::Ok();
  }

  const std::vector<float>* SpecTensor(const std::string& name) const {
    for (const TensorSpec& t : spec_.tensors) {
      if (t.name == name) return &t.data;
    }
    return nullptr;
  }

  // A duplicate Hugging Face may save must equal what it duplicates.
  Status CheckDuplicate(const SafetensorsTensor& t, const std::string& canonical,
                        const char* reason) const {
    const std::vector<float>* expected = SpecTensor(canonical);
    if (expected == nullptr) return InternalError("no tensor " + canonical + " to compare with");
    if (t.num_elements != expected->size() || SafetensorsToFloat(t) != *expected) {
      return InvalidCheckpoint(Where(t.name) + ": differs from " + canonical + ", but the config "
                               "says they are the same tensor (" + reason + ")");
    }
    return Status::Ok();
  }

  Status CheckPositions(const SafetensorsTensor& t) const {
    const std::vector<uint32_t> shape = {c_.config.max_position_embeddings, layout_.d_model};
    if (!SameShape(t.shape, shape)) {
      return InvalidCheckpoint(Where(t.name) + ": expected the sinusoidal position table " +
                               ShapeToString(shape) + ", found " + ShapeString(t.shape));
    }
    const std::vector<float> expected = SinusoidalPositions(shape[0], shape[1]);
    const std::vector<float> found = SafetensorsToFloat(t);
    for (size_t i = 0; i < found.size(); ++i) {
      if (!(std::fabs(found[i] - expected[i]) <= kPositionTolerance)) {
        return InvalidCheckpoint(Where(t.name) + ": not the sinusoidal position table the runtime "
                                 "computes: at position " + std::to_string(i / shape[1]) +
                                 ", dim " + std::to_string(i % shape[1]) + " expected " +
                                 std::to_string(expected[i]) + ", found " +
                                 std::to_string(found[i]));
      }
    }
    return Status::Ok();
  }

  Status CheckLeftovers() const {
    const bool shared = layout_.share_encoder_decoder_embeddings;
    const std::string decoder_embedding =
        shared ? "model.shared.weight" : "model.decoder.embed_tokens.weight";
    std::vector<std::string> unexpected;
    for (const SafetensorsTensor& t : c_.weights.tensors) {
      if (used_.count(t.name) != 0) continue;
      if (shared && (t.name == "model.encoder.embed_tokens.weight" ||
                     t.name == "model.decoder.embed_tokens.weight" ||
                     t.name == "model.shared.weight")) {
        HW_RETURN_IF_ERROR(CheckDuplicate(t, "model.shared.weight",
                                          "share_encoder_decoder_embeddings is true"));
      } else if (t.name == "lm_head.weight" && layout_.tie_word_embeddings) {
        HW_RETURN_IF_ERROR(CheckDuplicate(t, decoder_embedding, "tie_word_embeddings is true"));
      } else if (t.name == "model.encoder.embed_positions.weight" ||
                 t.name == "model.decoder.embed_positions.weight") {
        HW_RETURN_IF_ERROR(CheckPositions(t));
      } else {
        const bool gate = t.name.size() > sizeof(kGateSuffix) - 1 &&
                          t.name.compare(t.name.size() - (sizeof(kGateSuffix) - 1),
                                         std::string::npos, kGateSuffix) == 0;
        unexpected.push_back(t.name + " " + ShapeString(t.shape) +
                             (gate ? " (a gate for an attention block this config does not "
                                     "have)"
                                   : ""));
      }
    }
    if (unexpected.empty()) return Status::Ok();
    std::string list;
    for (size_t i = 0; i < unexpected.size() && i < kMaxListedTensors; ++i) {
      list += (i ? ", " : "") + unexpected[i];
    }
    if (unexpected.size() > kMaxListedTensors) list += ", ...";
    return InvalidCheckpoint(where_ + ": " + std::to_string(unexpected.size()) +
                             " tensor(s) not used by this config (unknown names, or parts the "
                             "config does not have): " + list);
  }

  void FillRest() {
    spec_.config = c_.config;
    spec_.config.unk_token_id = c_.vocab.unk_id;
    spec_.source_spm = c_.source_spm;
    spec_.target_spm = c_.target_spm;
    spec_.vocab = c_.vocab.pieces;
    spec_.source_checkpoint_sha256 = c_.weights_sha256;
    spec_.source_checkpoint_name = c_.name;
    spec_.source_dtype = dtypes_.size() == 1 ? *dtypes_.begin() : dtypes_.empty() ? "" : "mixed";
  }

  struct BlockId {
    AttentionKind kind;
    uint32_t layer;
    uint32_t heads;
  };

  const Checkpoint& c_;
  const std::string where_;
  const ModelConfig& layout_;
  const GateRule rule_;
  bool fold_gates_ = true;  // false under a --keep-heads spec
  const std::vector<float> no_gate_;
  ModelSpec spec_;
  std::vector<BlockId> kinds_;
  std::vector<std::vector<uint32_t>> kept_;
  std::vector<BlockLayout> full_blocks_;
  std::map<std::string, AttentionRole> roles_;
  std::set<std::string> used_;
  std::set<std::string> dtypes_;
};

}  // namespace

Result<ModelSpec> CheckpointToSpec(const Checkpoint& checkpoint, const KeepHeadsSpec* keep_heads,
                                   std::optional<GateRule> rule) {
  return Assembler(checkpoint, rule.value_or(checkpoint.gate_rule)).Run(keep_heads);
}

}  // namespace headwise::convert
