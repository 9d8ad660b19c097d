// The int8 path: activations quantized per row at run time, int32 sums (kernels/int8_gemm.h,
// which picks the CPU's kernel), fused parts one after the other on the same quantized input.
// The parts are read in place from the model, or, where FcParams::int8_packed is set and this
// CPU packs (x86 with the avx512-vnni or the avx2 family dispatched: kernels/int8_packed.h),
// from the Model's packed copies (int8_packed_store.h; their row-major pages released): the same
// bits either way.
#include <algorithm>
#include <string>
#include <vector>

#include "fc/fc_path.h"
#include "int8_packed_store.h"
#include "kernels/int8_gemm.h"
#include "kernels/int8_packed.h"
#include "parallel.h"

namespace headwise {
namespace {

class Int8Path final : public FcPath {
 public:
  // One part, read in place.
  struct Part {
    const int8_t* w = nullptr;      // [rows, in]
    const uint8_t* packed = nullptr;  // its packed copy (the Model's), or null
    const float* scale = nullptr;   // [rows]
    const float* bias = nullptr;    // [rows]
    size_t rows = 0;
  };

  Status Run(size_t rows, const float* x, float* y, Workers workers) const override {
    if (rows > scratch_->max_rows) {
      return InternalError(name_ + ": " + std::to_string(rows) + " rows exceed the int8 scratch");
    }
    kernels::QuantizeRowsDynamic(x, rows, in_, in_stride_, scratch_->q, scratch_->scale);
    // Tiles of 64 output channels (a multiple of the kernels' 4 and of the packed blocks' 16),
    // one task each.
    constexpr size_t kTile = 64;
    ParallelTiles(workers, out_, kTile, rows * in_ * out_, WorkKind::kInt8,
                  [&](size_t begin, size_t count) { RunRange(rows, y, begin, begin + count); });
    return Status::Ok();
  }

  std::string KernelName(size_t /*rows*/) const override {
    return std::string("int8: ") +
           (packed_ ? kernels::Int8PackedKernelHere().name : kernels::Int8GemmKernelName());
  }

 private:
  friend Result<std::unique_ptr<const FcPath>> headwise::CreateInt8Path(const FcSpec& spec);

  // Output channels [begin, end) of the stacked parts, on the quantized rows in the scratch.
  void RunRange(size_t rows, float* y, size_t begin, size_t end) const {
    ForPartsInRange(parts_, begin, end, [&](const Part& p, size_t first, size_t lo, size_t hi) {
      kernels::Int8GemmArgs a;
      a.xq = scratch_->q;
      a.x_scale = scratch_->scale;
      a.rows = rows;
      a.k = in_;
      a.w = p.w;
      a.w_scale = p.scale;
      a.bias = p.bias;
      a.y = y + first;
      a.y_stride = out_stride_;
      a.out_min = out_min_;
      a.out_max = out_max_;
      if (p.packed != nullptr) {
        kernels::Int8PackedKernelHere().gemm(a, p.packed, lo, hi);
        return;
      }
      kernels::Int8Gemm(a, lo, hi);
    });
  }

  std::vector<Part> parts_;
  bool packed_ = false;  // every part has its packed copy
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
  for (size_t i = 0; i < spec.num_parts; ++i) {
    const FcPart& p = spec.parts[i];
    const uint8_t* packed = params.int8_packed != nullptr && params.weight_pages != nullptr
                                ? params.int8_packed->Get(p.weight.i8(), p.weight.rows, spec.in,
                                                          *params.weight_pages)
                                : nullptr;
    q->parts_.push_back({p.weight.i8(), packed, p.weight.scale, p.bias.f32(), p.weight.rows});
  }
  q->packed_ = !q->parts_.empty();
  for (const Int8Path::Part& p : q->parts_) q->packed_ = q->packed_ && p.packed != nullptr;
  if (!q->packed_) {
    for (Int8Path::Part& p : q->parts_) p.packed = nullptr;  // all parts one way
  }
  return std::unique_ptr<const FcPath>(std::move(q));
}

}  // namespace headwise
