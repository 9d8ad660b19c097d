// The in-place fp32 path: kernels::F32Gemm on the model's F32 / F16 weights where they lie
// (x86 with AVX2, FMA and F16C; the AVX-512 family where the CPU has it), so the Translator
// holds no second copy of them. One F32 row goes to the one-row gemv (kOneRowPaths), which is
// faster there and gives the same floats (kernels/f32_gemv.h: the same summation order).
#include <algorithm>
#include <string>
#include <vector>

#include "fc/fc_path.h"
#include "kernels/f32_gemm.h"
#include "parallel.h"

namespace headwise {
namespace {

class F32GemmPath final : public FcPath {
 public:
  // One part, read in place.
  struct Part {
    const void* w = nullptr;      // [rows, in], F32 or F16
    bool f16 = false;
    const float* bias = nullptr;  // [rows]
    size_t rows = 0;
  };

  F32GemmPath(std::vector<Part> parts, const FcSpec& spec)
      : parts_(std::move(parts)),
        in_(spec.in),
        out_(spec.out),
        in_stride_(spec.in_stride),
        out_stride_(spec.out_stride),
        out_min_(spec.params->output_min),
        out_max_(spec.params->output_max),
        block_(kernels::F32GemmBlockChannels(spec.in, /*f16=*/false)) {}

  Status Run(size_t rows, const float* x, float* y, Workers workers) const override {
    // Blocks of channels whose F32 weights fit in L2 (F16 ones take half), one task each.
    ParallelTiles(workers, out_, block_, rows * in_ * out_, WorkKind::kFloat,
                  [&](size_t begin, size_t count) { RunRange(rows, x, y, begin, begin + count); });
    return Status::Ok();
  }

  std::string KernelName(size_t /*rows*/) const override {
    return std::string("fp32: ") + kernels::F32GemmKernelName();
  }

 private:
  void RunRange(size_t rows, const float* x, float* y, size_t begin, size_t end) const {
    ForPartsInRange(parts_, begin, end, [&](const Part& p, size_t first, size_t lo, size_t hi) {
      kernels::F32GemmArgs a;
      a.x = x;
      a.x_stride = in_stride_;
      a.rows = rows;
      a.k = in_;
      a.w = p.w;
      a.f16 = p.f16;
      a.bias = p.bias;
      a.y = y + first;
      a.y_stride = out_stride_;
      a.out_min = out_min_;
      a.out_max = out_max_;
      kernels::F32Gemm(a, lo, hi);
    });
  }

  std::vector<Part> parts_;
  size_t in_, out_, in_stride_, out_stride_;
  float out_min_, out_max_;
  size_t block_;
};

}  // namespace

Result<std::unique_ptr<const FcPath>> CreateF32GemmPath(const FcSpec& spec) {
  if (!kernels::HaveFastF32Gemm()) return std::unique_ptr<const FcPath>();
  std::vector<F32GemmPath::Part> parts;
  for (size_t i = 0; i < spec.num_parts; ++i) {
    const FcPart& p = spec.parts[i];
    if (p.weight.dtype != DType::kF32 && p.weight.dtype != DType::kF16) {
      return std::unique_ptr<const FcPath>();  // I8 parts among others: XNNPACK widens them
    }
    parts.push_back({p.weight.data, p.weight.dtype == DType::kF16, p.bias.f32(), p.weight.rows});
  }
  return std::unique_ptr<const FcPath>(new F32GemmPath(std::move(parts), spec));
}

}  // namespace headwise
