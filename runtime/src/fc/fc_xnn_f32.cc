// The XNNPACK f32 path: the fallback for every operator no other family takes.
#include <cstring>
#include <string>
#include <vector>

#include "fc/fc_path.h"
#include "parallel.h"
#include "xnn_backend.h"

namespace headwise {
namespace {

// The F32 values of a weight matrix (WeightView::WidenRow) written row-major to `out`
// (w.elements() floats).
void WidenRows(const WeightView& w, float* out) {
  for (size_t r = 0; r < w.rows; ++r) w.WidenRow(r, out + r * w.cols);
}

class XnnF32Path final : public FcPath {
 public:
  XnnF32Path(XnnOperator op, size_t in, size_t out, std::string name)
      : op_(std::move(op)), in_(in), out_(out), name_(std::move(name)) {}

  Status Run(size_t rows, const float* x, float* y, Workers workers) const override {
    // Waking the pool's workers costs microseconds (far more on a loaded machine); a product
    // this small is done sooner by the calling thread alone. XNNPACK's workers wait as
    // XNNPACK tells them (its own flags), whatever workers.spin says.
    pthreadpool* pool = workers.Split(rows * in_ * out_) ? workers.pool : nullptr;
    xnn_status s = xnn_setup_fully_connected_nc_f32(op_.get(), rows, x, y, pool);
    if (s != xnn_status_success) return FromXnn(s, "setting up " + name_);
    s = xnn_run_operator(op_.get(), pool);
    if (s != xnn_status_success) return FromXnn(s, "running " + name_);
    return Status::Ok();
  }

  std::string KernelName(size_t /*rows*/) const override { return "fp32: xnnpack"; }
  bool HoldsWeightCopy() const override { return true; }

 private:
  XnnOperator op_;
  size_t in_, out_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<const FcPath>> CreateXnnF32Path(const FcSpec& spec) {
  const size_t in = spec.in, out = spec.out;
  // XNNPACK packs the weights into its own F32 buffer at creation, so a fused operator, or one
  // of F16 / I8 weights widened here, is created from a temporary F32 copy; a single F32 part
  // is passed in place. (F16 parts reach here when the f16 path is off: on x86 Debian's 2022
  // XNNPACK emulates fp16 and its f16 fully-connected ran 4x slower than F32, and CPUs without
  // ARMv8.2 FP16 have no f16 kernels at all; DetectFp16Arithmetic decides.)
  const bool widen = spec.num_parts > 1 || !spec.AllWeights(DType::kF32);
  std::vector<float> kernel, bias;
  const float* k = spec.parts[0].weight.f32();
  const float* b = spec.parts[0].bias.f32();
  if (widen) {
    kernel.resize(out * in);
    bias.resize(out);
    size_t row = 0;
    for (size_t i = 0; i < spec.num_parts; ++i) {
      const FcPart& p = spec.parts[i];
      WidenRows(p.weight, kernel.data() + row * in);
      std::memcpy(bias.data() + row, p.bias.f32(), p.weight.rows * sizeof(float));
      row += p.weight.rows;
    }
    k = kernel.data();
    b = bias.data();
  }
  xnn_operator_t op = nullptr;
  const xnn_status s = xnn_create_fully_connected_nc_f32(
      in, out, spec.in_stride, spec.out_stride, k, b, spec.params->output_min,
      spec.params->output_max, /*flags=*/XNN_FLAG_YIELD_WORKERS, &op);
  XnnOperator owned(op);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + *spec.name + " [" + std::to_string(out) + " x " +
                                    std::to_string(in) + "]"));
  spec.ReleaseWeightPages();  // packed: the operator reads its own copy from now on
  return std::unique_ptr<const FcPath>(new XnnF32Path(std::move(owned), in, out, *spec.name));
}

}  // namespace headwise
