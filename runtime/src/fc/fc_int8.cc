// The int8 path: activations quantized per row at run time, int32 sums (kernels/int8_gemm.h,
// which picks the CPU's kernel). A single part is read in place from the model; fused parts
// are concatenated into a copy the path owns.
#include <string>
#include <vector>

#include "fc/fc_path.h"
#include "kernels/int8_gemm.h"
#include "parallel.h"

namespace headwise {
namespace {

class Int8Path final : public FcPath {
 public:
  Status Run(size_t rows, const float* x, float* y, pthreadpool* pool) const override {
    if (rows > scratch_->max_rows) {
      return InternalError(name_ + ": " + std::to_string(rows) + " rows exceed the int8 scratch");
    }
    kernels::QuantizeRowsDynamic(x, rows, in_, in_stride_, scratch_->q, scratch_->scale);
    kernels::Int8GemmArgs a;
    a.xq = scratch_->q;
    a.x_scale = scratch_->scale;
    a.rows = rows;
    a.k = in_;
    a.w = w_;
    a.w_scale = scale_;
    a.bias = bias_;
    a.y = y;
    a.y_stride = out_stride_;
    a.out_min = out_min_;
    a.out_max = out_max_;
    if (pool == nullptr || rows * in_ * out_ < kMinParallelWork) {
      kernels::Int8Gemm(a, 0, out_);
      return Status::Ok();
    }
    // Tiles of 64 output channels (a multiple of the kernel's 4), one task each.
    constexpr size_t kTile = 64;
    pthreadpool_parallelize_1d_tile_1d(
        pool,
        [](void* context, size_t begin, size_t count) {
          kernels::Int8Gemm(*static_cast<const kernels::Int8GemmArgs*>(context), begin,
                            begin + count);
        },
        &a, out_, kTile, kPoolFlags);
    return Status::Ok();
  }

  std::string KernelName(size_t /*rows*/) const override {
    return std::string("int8: ") + kernels::Int8GemmKernelName();
  }

 private:
  friend Result<std::unique_ptr<const FcPath>> headwise::CreateInt8Path(const FcSpec& spec);

  const int8_t* w_ = nullptr;     // [out, in]: the model's tensor or w_owned_
  const float* scale_ = nullptr;  // [out]
  const float* bias_ = nullptr;   // [out]
  std::vector<int8_t> w_owned_;   // fused parts only
  std::vector<float> scale_owned_, bias_owned_;
  const Int8Scratch* scratch_ = nullptr;
  size_t in_ = 0, out_ = 0, in_stride_ = 0, out_stride_ = 0;
  float out_min_ = 0, out_max_ = 0;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<const FcPath>> CreateInt8Path(const FcSpec& spec) {
  if (!spec.AllWeights(DType::kI8)) return std::unique_ptr<const FcPath>();
  const FcParams& params = *spec.params;
  if (params.int8_scratch == nullptr || params.int8_scratch->max_cols < spec.in) {
    return InternalError(*spec.name + ": int8 weights need the Translator's int8 scratch (" +
                         std::to_string(spec.in) + " columns)");
  }
  auto q = std::make_unique<Int8Path>();
  q->scratch_ = params.int8_scratch;
  q->in_ = spec.in;
  q->out_ = spec.out;
  q->in_stride_ = spec.in_stride;
  q->out_stride_ = spec.out_stride;
  q->out_min_ = params.output_min;
  q->out_max_ = params.output_max;
  q->name_ = *spec.name;
  if (spec.num_parts == 1) {
    q->w_ = spec.parts[0].weight.i8();
    q->scale_ = spec.parts[0].weight.scale;
    q->bias_ = spec.parts[0].bias.f32();
    return std::unique_ptr<const FcPath>(std::move(q));
  }
  q->w_owned_.reserve(spec.out * spec.in);
  for (size_t i = 0; i < spec.num_parts; ++i) {
    const FcPart& p = spec.parts[i];
    q->w_owned_.insert(q->w_owned_.end(), p.weight.i8(), p.weight.i8() + p.weight.elements());
    q->scale_owned_.insert(q->scale_owned_.end(), p.weight.scale, p.weight.scale + p.weight.rows);
    q->bias_owned_.insert(q->bias_owned_.end(), p.bias.f32(), p.bias.f32() + p.weight.rows);
  }
  q->w_ = q->w_owned_.data();
  q->scale_ = q->scale_owned_.data();
  q->bias_ = q->bias_owned_.data();
  return std::unique_ptr<const FcPath>(std::move(q));
}

}  // namespace headwise
