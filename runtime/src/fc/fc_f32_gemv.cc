// The one-row fp32 path: kernels::F32Gemv on the model's F32 weights in place (batch-1
// decoding), where it has a vector kernel; XNNPACK's own kernels are faster elsewhere.
#include <algorithm>
#include <string>
#include <vector>

#include "fc/fc_path.h"
#include "kernels/f32_gemv.h"
#include "parallel.h"

namespace headwise {
namespace {

class F32GemvPath final : public FcPath {
 public:
  // One part, read in place.
  struct Part {
    const float* w = nullptr;     // [rows, in]
    const float* bias = nullptr;  // [rows]
    size_t rows = 0;
  };

  F32GemvPath(std::vector<Part> parts, size_t in, size_t out, float out_min, float out_max)
      : parts_(std::move(parts)), in_(in), out_(out), out_min_(out_min), out_max_(out_max) {}

  Status Run(size_t /*rows == 1*/, const float* x, float* y, Workers workers) const override {
    // Tiles of 64 output channels (a multiple of the kernel's 8), one task each.
    ParallelTiles(workers, out_, 64, in_ * out_, WorkKind::kFloat,
                  [&](size_t begin, size_t count) { RunRange(x, y, begin, begin + count); });
    return Status::Ok();
  }

  std::string KernelName(size_t /*rows*/) const override {
    return std::string("fp32: ") + kernels::F32GemvKernelName();
  }

 private:
  void RunRange(const float* x, float* y, size_t begin, size_t end) const {
    ForPartsInRange(parts_, begin, end, [&](const Part& p, size_t first, size_t lo, size_t hi) {
      kernels::F32GemvArgs a;
      a.x = x;
      a.k = in_;
      a.w = p.w;
      a.bias = p.bias;
      a.y = y + first;
      a.out_min = out_min_;
      a.out_max = out_max_;
      kernels::F32Gemv(a, lo, hi);
    });
  }

  std::vector<Part> parts_;
  size_t in_, out_;
  float out_min_, out_max_;
};

}  // namespace

Result<std::unique_ptr<const FcPath>> CreateF32GemvPath(const FcSpec& spec) {
  if (!spec.AllWeights(DType::kF32) || !kernels::HaveFastF32Gemv()) {
    return std::unique_ptr<const FcPath>();
  }
  std::vector<F32GemvPath::Part> parts;
  for (size_t i = 0; i < spec.num_parts; ++i) {
    const FcPart& p = spec.parts[i];
    parts.push_back({p.weight.f32(), p.bias.f32(), p.weight.rows});
  }
  return std::unique_ptr<const FcPath>(new F32GemvPath(
      std::move(parts), spec.in, spec.out, spec.params->output_min, spec.params->output_max));
}

}  // namespace headwise
