// Translator::Create and the accessors: validates the limits, chooses the matmul precision,
// plans and carves the arena, and creates the Network (pool and every operator) once.
// Translation itself is in translate_ids.cc.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <utility>

#include "kernels/embedding.h"
#include "translator_impl.h"
#include "translator_plan.h"
#include "xnn_backend.h"

namespace headwise {
namespace {

Status CheckLimits(const TranslatorLimits& l, const ModelConfig& dims) {
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
    if (static_cast<uint32_t>(value) > dims.max_position_embeddings) {  // value >= 1 here
      return InvalidArgument(std::string("TranslatorLimits.") + name + " " +
                             std::to_string(value) + " exceeds the model's max_position_embeddings " +
                             std::to_string(dims.max_position_embeddings));
    }
  }
  if (l.worker_wait != WorkerWait::kYield && l.worker_wait != WorkerWait::kSpin) {
    return InvalidArgument("TranslatorLimits.worker_wait: expected kYield (0) or kSpin (1), found " +
                           std::to_string(static_cast<int>(l.worker_wait)));
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

struct PrecisionChoice {
  MatmulPrecision precision = MatmulPrecision::kF32;
  std::string note;
};

// The matmul precision (and its note) from the model's weight types, limits.fp16_compute and
// the CPU. Errors: kRequire that cannot be honoured.
Result<PrecisionChoice> ChoosePrecision(const Model::Impl& model, Fp16Compute mode) {
  if (mode != Fp16Compute::kAuto && mode != Fp16Compute::kOff && mode != Fp16Compute::kRequire) {
    return InvalidArgument("TranslatorLimits.fp16_compute: expected kAuto (0), kOff (1) or kRequire (2), found " +
                           std::to_string(static_cast<int>(mode)));
  }
  const bool f16 = HasF16Matrices(model);
  const bool i8 = HasInt8Weights(model);
  PrecisionChoice t;
  t.precision = i8 ? MatmulPrecision::kInt8 : MatmulPrecision::kF32;
  if (!f16) {
    if (mode == Fp16Compute::kRequire) {
      return InvalidArgument(
          "TranslatorLimits.fp16_compute = kRequire: the model has no F16 weight matrices "
          "(convert it with headwise-convert --weights fp16)");
    }
    t.note = i8 ? "int8: the model's I8 matrices run the int8 kernel"
                : "f32: the model's weights are F32";
    return t;
  }
  if (mode == Fp16Compute::kOff) {
    t.note = "f32: fp16_compute is off; F16 weights widened to F32";
    return t;
  }
  const Fp16Support& cpu = DetectFp16Arithmetic();
  if (!cpu.available) {
    if (mode == Fp16Compute::kRequire) {
      return BackendError("TranslatorLimits.fp16_compute = kRequire: no fp16 arithmetic here: " +
                          cpu.reason + "; use kAuto to fall back to F32");
    }
    t.note = "f32: " + cpu.reason + "; F16 weights widened to F32";
    return t;
  }
  t.precision = MatmulPrecision::kF16;
  t.note = "f16: " + cpu.reason + "; F16 matrices run XNNPACK's f16 operators";
  return t;
}

}  // namespace

Result<std::unique_ptr<Translator::Impl>> CreateTranslatorImpl(std::shared_ptr<const Model> model,
                                                               const TranslatorLimits& limits) {
  if (model == nullptr) return InvalidArgument("Translator::Create: model is null");
  auto impl = std::make_unique<Translator::Impl>();
  impl->model = std::move(model);
  const Model::Impl& m = impl->model->impl();
  const ModelConfig& dims = m.config;
  HW_RETURN_IF_ERROR(CheckLimits(limits, dims));
  HW_ASSIGN_OR_RETURN(int sort_window, ResolveSortWindow(limits));
  impl->limits = limits;
  impl->limits.sort_window = sort_window;
  // H of hypotheses.h: fewer than 3 * beam records per sentence (see beam.cc for the bound).
  const size_t hyps_per_sentence = 3 * static_cast<size_t>(limits.max_beam);
  HW_RETURN_IF_ERROR(InitXnnpack());
  HW_ASSIGN_OR_RETURN(PrecisionChoice precision, ChoosePrecision(m, limits.fp16_compute));
  impl->precision = precision.precision;
  impl->precision_note = std::move(precision.note);
  const bool f16 = impl->precision == MatmulPrecision::kF16;

  ArenaCarver measure;
  LayoutBuffers(m, impl->limits, hyps_per_sentence, f16, measure, &impl->buf);
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
  impl->line_status.resize(static_cast<size_t>(sort_window));  // the arena holds as many lines
  ArenaCarver carve(impl->arena.data());
  LayoutBuffers(m, impl->limits, hyps_per_sentence, f16, carve, &impl->buf);
  kernels::SinusoidalPositions(
      static_cast<size_t>(std::max(limits.max_source_tokens, limits.max_target_tokens)),
      static_cast<size_t>(dims.d_model), impl->buf.positions);

  HW_RETURN_IF_ERROR(CreateNetwork(m, limits.num_threads, &impl->buf.int8,
                                   f16 ? &impl->buf.f16 : nullptr, &impl->net));
  impl->net.spin_workers = limits.worker_wait == WorkerWait::kSpin;
  const bool shortlist = ShortlistEnabled(m, limits);
  if (shortlist) impl->shortlist = ShortlistOutput(m, impl->buf.shortlist, &impl->buf.int8);
  HW_ASSIGN_OR_RETURN(impl->limits.batch_lanes, ResolveBatchLanes(impl->limits, impl->net));
  if (impl->limits.batch_lanes > 1) {
    const ShortlistBuffers* union_buffers = shortlist ? &impl->buf.shortlist : nullptr;
    const size_t lane_bytes =
        MeasureLanes(m, impl->limits, hyps_per_sentence, union_buffers);
    if (lane_bytes > SIZE_MAX - bytes ||
        (limits.max_memory_bytes != 0 && bytes + lane_bytes > limits.max_memory_bytes)) {
      return Status(ErrorCode::kLimitExceeded,
                    "these TranslatorLimits need " + std::to_string(bytes) +
                        " bytes of activation memory and " + std::to_string(lane_bytes) +
                        " more for " + std::to_string(impl->limits.batch_lanes) +
                        " batch lanes; max_memory_bytes is " +
                        std::to_string(limits.max_memory_bytes) +
                        " (batch_lanes = 1 needs no lane memory)");
    }
    HW_RETURN_IF_ERROR(CreateLanes(m, impl->limits, hyps_per_sentence, union_buffers, &impl->lanes));
  }
  impl->use_team = impl->net.pool.get() != nullptr && !HoldsWeightCopies(impl->net);
  impl->kernel_paths = KernelPaths(impl->net);
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
size_t Translator::arena_bytes() const { return impl_->arena.size() + impl_->lanes.bytes; }
MatmulPrecision Translator::matmul_precision() const { return impl_->precision; }
const std::string& Translator::precision_note() const { return impl_->precision_note; }
const std::string& Translator::kernel_paths() const { return impl_->kernel_paths; }
bool Translator::uses_shortlist() const { return impl_->shortlist.valid(); }

const char* MatmulPrecisionName(MatmulPrecision precision) {
  switch (precision) {
    case MatmulPrecision::kF32: return "f32";
    case MatmulPrecision::kF16: return "f16";
    case MatmulPrecision::kInt8: return "int8";
  }
  return "f32";
}

}  // namespace headwise
