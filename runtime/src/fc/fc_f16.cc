// The fp16 arithmetic path (aarch64 with ARMv8.2 FP16; the Translator decides, see
// DetectFp16Arithmetic): x narrowed to F16 (xnn convert_nc_f32_f16), XNNPACK's f16
// fully-connected, y widened back to F32, through the Translator's F16Scratch.
#include <cstring>
#include <string>
#include <vector>

#include "common/half.h"
#include "fc/fc_path.h"
#include "parallel.h"
#include "xnn_backend.h"

namespace headwise {
namespace {

class F16Path final : public FcPath {
 public:
  Status Run(size_t rows, const float* x, float* y, Workers workers) const override {
    if (rows * in_ > scratch_->in_elements || rows * out_ > scratch_->out_elements) {
      return InternalError(name_ + ": " + std::to_string(rows) + " rows exceed the f16 scratch");
    }
    pthreadpool* pool = workers.Split(rows * in_ * out_) ? workers.pool : nullptr;
    // The conversions are O(rows * channels) against the product's O(rows * in * out); they
    // stay on the calling thread unless the product itself is parallel.
    xnn_status s = xnn_setup_convert_nc_f32_f16(to_f16_.get(), rows, x, scratch_->in, pool);
    if (s == xnn_status_success) s = xnn_run_operator(to_f16_.get(), pool);
    if (s != xnn_status_success) return FromXnn(s, "converting the input of " + name_ + " to f16");
    s = xnn_setup_fully_connected_nc_f16(op_.get(), rows, scratch_->in, scratch_->out, pool);
    if (s != xnn_status_success) return FromXnn(s, "setting up " + name_ + " (f16)");
    s = xnn_run_operator(op_.get(), pool);
    if (s != xnn_status_success) return FromXnn(s, "running " + name_ + " (f16)");
    s = xnn_setup_convert_nc_f16_f32(from_f16_.get(), rows, scratch_->out, y, pool);
    if (s == xnn_status_success) s = xnn_run_operator(from_f16_.get(), pool);
    if (s != xnn_status_success) {
      return FromXnn(s, "converting the output of " + name_ + " from f16");
    }
    return Status::Ok();
  }

  std::string KernelName(size_t /*rows*/) const override { return "fp16: xnnpack"; }
  bool HoldsWeightCopy() const override { return true; }

 private:
  friend Result<std::unique_ptr<const FcPath>> headwise::CreateF16Path(const FcSpec& spec);

  XnnOperator op_;        // the f16 fully-connected
  XnnOperator to_f16_;    // narrows its input
  XnnOperator from_f16_;  // widens its output
  const F16Scratch* scratch_ = nullptr;
  size_t in_ = 0, out_ = 0;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<const FcPath>> CreateF16Path(const FcSpec& spec) {
  const FcParams& params = *spec.params;
  if (params.f16_scratch == nullptr || !spec.AllWeights(DType::kF16)) {
    return std::unique_ptr<const FcPath>();
  }
  const size_t in = spec.in, out = spec.out;
  const std::string& name = *spec.name;
  // Weights: a single part is read in place from the model (XNNPACK packs it into its own F16
  // buffer, half the size of the F32 path's), fused parts are stacked into a temporary F16
  // copy. Biases are F32 in the file and narrowed here (the f16 operator adds an F16 bias).
  std::vector<uint16_t> kernel, bias(out);
  const uint16_t* k = spec.parts[0].weight.f16();
  if (spec.num_parts > 1) kernel.resize(out * in);
  size_t row = 0;
  for (size_t i = 0; i < spec.num_parts; ++i) {
    const FcPart& p = spec.parts[i];
    if (spec.num_parts > 1) {
      std::memcpy(kernel.data() + row * in, p.weight.f16(), p.weight.elements() * 2);
    }
    for (size_t r = 0; r < p.weight.rows; ++r) bias[row + r] = FloatToF16(p.bias.f32()[r]);
    row += p.weight.rows;
  }
  if (spec.num_parts > 1) k = kernel.data();
  auto path = std::make_unique<F16Path>();
  path->in_ = in;
  path->out_ = out;
  path->name_ = name;
  path->scratch_ = params.f16_scratch;
  const std::string shape = " [" + std::to_string(out) + " x " + std::to_string(in) + "]";
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_fully_connected_nc_f16(in, out, in, out, k, bias.data(),
                                                   params.output_min, params.output_max,
                                                   /*flags=*/XNN_FLAG_YIELD_WORKERS, &op);
  path->op_.reset(op);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + name + shape + " (f16)"));
  spec.ReleaseWeightPages();  // packed: the operator reads its own copy from now on
  op = nullptr;
  s = xnn_create_convert_nc_f32_f16(in, spec.in_stride, in, /*flags=*/0, &op);
  path->to_f16_.reset(op);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + name + " input conversion to f16"));
  op = nullptr;
  s = xnn_create_convert_nc_f16_f32(out, out, spec.out_stride, /*flags=*/0, &op);
  path->from_f16_.reset(op);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + name + " output conversion from f16"));
  return std::unique_ptr<const FcPath>(std::move(path));
}

}  // namespace headwise
