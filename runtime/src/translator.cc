// Translator::Create and the accessors: validates the limits, plans and carves the arena,
// starts the pool and creates every XNNPACK operator once. Translation itself is in
// translate_ids.cc.
#include <algorithm>
#include <climits>
#include <string>
#include <utility>

#include "kernels/embedding.h"
#include "translator_impl.h"
#include "translator_plan.h"
#include "xnn_backend.h"

namespace headwise {
namespace {

Status CheckLimits(const TranslatorLimits& l, const ModelDims& dims) {
  const std::pair<const char*, int> positive[] = {{"max_batch", l.max_batch},
                                                 {"max_source_tokens", l.max_source_tokens},
                                                 {"max_target_tokens", l.max_target_tokens},
                                                 {"max_beam", l.max_beam},
                                                 {"num_threads", l.num_threads}};
  for (const auto& [name, value] : positive) {
    if (value < 1) {
      return InvalidArgument(std::string("TranslatorLimits.") + name + " must be >= 1, found " +
                             std::to_string(value));
    }
  }
  for (const auto& [name, value] : {std::pair<const char*, int>{"max_source_tokens", l.max_source_tokens},
                                    std::pair<const char*, int>{"max_target_tokens", l.max_target_tokens}}) {
    if (value > dims.max_position_embeddings) {
      return InvalidArgument(std::string("TranslatorLimits.") + name + " " +
                             std::to_string(value) + " exceeds the model's max_position_embeddings " +
                             std::to_string(dims.max_position_embeddings));
    }
  }
  // Rows, slots and beam candidates (beam * vocab + token) are indexed with int32.
  const long long rows = static_cast<long long>(l.max_batch) * l.max_beam;
  const long long src = static_cast<long long>(l.max_batch) * l.max_source_tokens;
  const long long candidates = static_cast<long long>(l.max_beam) * dims.vocab_size;
  if (rows > INT32_MAX / 4 || src > INT32_MAX / 4 || candidates > INT32_MAX / 2) {
    return InvalidArgument("TranslatorLimits: max_batch * max_beam (" + std::to_string(rows) +
                           "), max_batch * max_source_tokens (" + std::to_string(src) +
                           ") or max_beam * vocab_size (" + std::to_string(candidates) +
                           ") is too large");
  }
  return Status::Ok();
}

FcParams ClampFor(ActivationKind a) {
  FcParams p;
  if (a == ActivationKind::kRelu) p.output_min = 0.0f;
  return p;
}

// Decides t.precision (and its note) from the model's weight types, limits.fp16_compute and
// the CPU. Errors: kRequire that cannot be honoured.
Status ChoosePrecision(Translator::Impl& t) {
  const Fp16Compute mode = t.limits.fp16_compute;
  if (mode != Fp16Compute::kAuto && mode != Fp16Compute::kOff && mode != Fp16Compute::kRequire) {
    return InvalidArgument("TranslatorLimits.fp16_compute: expected kAuto (0), kOff (1) or kRequire (2), found " +
                           std::to_string(static_cast<int>(mode)));
  }
  const bool f16 = HasF16Matrices(*t.m);
  const bool i8 = HasInt8Weights(*t.m);
  t.precision = i8 ? MatmulPrecision::kInt8 : MatmulPrecision::kF32;
  if (!f16) {
    if (mode == Fp16Compute::kRequire) {
      return InvalidArgument(
          "TranslatorLimits.fp16_compute = kRequire: the model has no F16 weight matrices "
          "(convert it with headwise-convert --weights fp16)");
    }
    t.precision_note = i8 ? "int8: the model's I8 matrices run the int8 kernel"
                          : "f32: the model's weights are F32";
    return Status::Ok();
  }
  if (mode == Fp16Compute::kOff) {
    t.precision_note = "f32: fp16_compute is off; F16 weights widened to F32";
    return Status::Ok();
  }
  const Fp16Support& cpu = DetectFp16Arithmetic();
  if (!cpu.available) {
    if (mode == Fp16Compute::kRequire) {
      return BackendError("TranslatorLimits.fp16_compute = kRequire: no fp16 arithmetic here: " +
                          cpu.reason + "; use kAuto to fall back to F32");
    }
    t.precision_note = "f32: " + cpu.reason + "; F16 weights widened to F32";
    return Status::Ok();
  }
  t.precision = MatmulPrecision::kF16;
  t.precision_note = "f16: " + cpu.reason + "; F16 matrices run XNNPACK's f16 operators";
  return Status::Ok();
}

Status CreateOperators(Translator::Impl& t) {
  const Model::Impl& m = *t.m;
  FcParams plain;
  plain.int8_scratch = &t.buf.int8;
  if (t.precision == MatmulPrecision::kF16) plain.f16_scratch = &t.buf.f16;
  FcParams ffn1 = ClampFor(m.dims.activation);
  ffn1.int8_scratch = plain.int8_scratch;
  ffn1.f16_scratch = plain.f16_scratch;
  for (size_t l = 0; l < m.encoder_layers.size(); ++l) {
    const EncoderLayerWeights& w = m.encoder_layers[l];
    const std::string name = "encoder layer " + std::to_string(l) + " ";
    EncoderLayerOps ops;
    const AttentionWeights& a = w.self_attn;
    if (a.num_heads > 0) {
      const FcPart qkv[] = {{a.q_w, a.q_b}, {a.k_w, a.k_b}, {a.v_w, a.v_b}};
      HW_ASSIGN_OR_RETURN(ops.qkv, FullyConnected::Create(qkv, 3, plain, name + "self-attention qkv"));
      const FcPart out{a.out_w, a.out_b};
      HW_ASSIGN_OR_RETURN(ops.out, FullyConnected::Create(&out, 1, plain, name + "self-attention out_proj"));
    }
    const FcPart fc1{w.ffn.fc1_w, w.ffn.fc1_b}, fc2{w.ffn.fc2_w, w.ffn.fc2_b};
    HW_ASSIGN_OR_RETURN(ops.fc1, FullyConnected::Create(&fc1, 1, ffn1, name + "fc1"));
    HW_ASSIGN_OR_RETURN(ops.fc2, FullyConnected::Create(&fc2, 1, plain, name + "fc2"));
    t.encoder_ops.push_back(std::move(ops));
  }
  for (size_t l = 0; l < m.decoder_layers.size(); ++l) {
    const DecoderLayerWeights& w = m.decoder_layers[l];
    const std::string name = "decoder layer " + std::to_string(l) + " ";
    DecoderLayerOps ops;
    const AttentionWeights& a = w.self_attn;
    if (a.num_heads > 0) {
      const FcPart qkv[] = {{a.q_w, a.q_b}, {a.k_w, a.k_b}, {a.v_w, a.v_b}};
      HW_ASSIGN_OR_RETURN(ops.self_qkv, FullyConnected::Create(qkv, 3, plain, name + "self-attention qkv"));
      const FcPart out{a.out_w, a.out_b};
      HW_ASSIGN_OR_RETURN(ops.self_out, FullyConnected::Create(&out, 1, plain, name + "self-attention out_proj"));
    }
    const AttentionWeights& c = w.cross_attn;
    if (c.num_heads > 0) {
      const FcPart q{c.q_w, c.q_b};
      HW_ASSIGN_OR_RETURN(ops.cross_q, FullyConnected::Create(&q, 1, plain, name + "cross-attention q_proj"));
      const FcPart kv[] = {{c.k_w, c.k_b}, {c.v_w, c.v_b}};
      HW_ASSIGN_OR_RETURN(ops.cross_kv, FullyConnected::Create(kv, 2, plain, name + "cross-attention kv"));
      const FcPart out{c.out_w, c.out_b};
      HW_ASSIGN_OR_RETURN(ops.cross_out, FullyConnected::Create(&out, 1, plain, name + "cross-attention out_proj"));
    }
    const FcPart fc1{w.ffn.fc1_w, w.ffn.fc1_b}, fc2{w.ffn.fc2_w, w.ffn.fc2_b};
    HW_ASSIGN_OR_RETURN(ops.fc1, FullyConnected::Create(&fc1, 1, ffn1, name + "fc1"));
    HW_ASSIGN_OR_RETURN(ops.fc2, FullyConnected::Create(&fc2, 1, plain, name + "fc2"));
    t.decoder_ops.push_back(std::move(ops));
  }
  const FcPart lm{m.lm_head, m.final_logits_bias};
  HW_ASSIGN_OR_RETURN(t.lm_head, FullyConnected::Create(&lm, 1, plain, "lm_head"));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Translator::Impl>> CreateTranslatorImpl(std::shared_ptr<const Model> model,
                                                               const TranslatorLimits& limits) {
  if (model == nullptr) return InvalidArgument("Translator::Create: model is null");
  auto impl = std::make_unique<Translator::Impl>();
  impl->model = std::move(model);
  impl->m = &impl->model->impl();
  impl->limits = limits;
  const ModelDims& dims = impl->m->dims;
  HW_RETURN_IF_ERROR(CheckLimits(limits, dims));
  impl->hyps_per_sentence = 3 * static_cast<size_t>(limits.max_beam);
  HW_RETURN_IF_ERROR(InitXnnpack());
  HW_RETURN_IF_ERROR(ChoosePrecision(*impl));
  const bool f16 = impl->precision == MatmulPrecision::kF16;

  ArenaCarver measure;
  LayoutBuffers(*impl->m, limits, impl->hyps_per_sentence, f16, measure, &impl->buf);
  if (measure.overflowed()) {
    return Status(ErrorCode::kLimitExceeded,
                  "the activation memory these TranslatorLimits need does not fit in size_t");
  }
  const size_t bytes = measure.bytes();
  if (limits.max_memory_bytes != 0 && bytes > limits.max_memory_bytes) {
    return Status(ErrorCode::kLimitExceeded,
                  "these TranslatorLimits need " + std::to_string(bytes) +
                      " bytes of activation memory; max_memory_bytes is " +
                      std::to_string(limits.max_memory_bytes));
  }
  HW_ASSIGN_OR_RETURN(impl->arena, Arena::Allocate(bytes));
  ArenaCarver carve(impl->arena.data());
  LayoutBuffers(*impl->m, limits, impl->hyps_per_sentence, f16, carve, &impl->buf);
  kernels::SinusoidalPositions(
      static_cast<size_t>(std::max(limits.max_source_tokens, limits.max_target_tokens)),
      static_cast<size_t>(dims.d_model), impl->buf.positions);

  HW_ASSIGN_OR_RETURN(impl->pool, ThreadPool::Create(limits.num_threads));
  HW_RETURN_IF_ERROR(CreateOperators(*impl));
  return impl;
}

Result<std::unique_ptr<Translator>> Translator::Create(std::shared_ptr<const Model> model,
                                                       const TranslatorLimits& limits) {
  HW_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, CreateTranslatorImpl(std::move(model), limits));
  return std::unique_ptr<Translator>(new Translator(std::move(impl)));
}

Translator::Translator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Translator::~Translator() = default;

const TranslatorLimits& Translator::limits() const { return impl_->limits; }
const std::shared_ptr<const Model>& Translator::model() const { return impl_->model; }
size_t Translator::arena_bytes() const { return impl_->arena.size(); }
MatmulPrecision Translator::matmul_precision() const { return impl_->precision; }
const std::string& Translator::precision_note() const { return impl_->precision_note; }

const char* MatmulPrecisionName(MatmulPrecision precision) {
  switch (precision) {
    case MatmulPrecision::kF32: return "f32";
    case MatmulPrecision::kF16: return "f16";
    case MatmulPrecision::kInt8: return "int8";
  }
  return "f32";
}

}  // namespace headwise
