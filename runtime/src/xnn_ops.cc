#include "xnn_ops.h"

#include <cpuinfo.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "common/half.h"
#include "kernels/f32_gemv.h"
#include "kernels/int8_gemm.h"
#include "parallel.h"

namespace headwise {
namespace {

const char* XnnStatusName(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "xnn_status_success";
    case xnn_status_uninitialized: return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter: return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state: return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter: return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware: return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory: return "xnn_status_out_of_memory";
  }
  return "xnn_status_unknown";
}

Status FromXnn(xnn_status s, const std::string& what) {
  if (s == xnn_status_success) return Status::Ok();
  const ErrorCode code = s == xnn_status_out_of_memory ? ErrorCode::kOutOfMemory : ErrorCode::kBackend;
  return Status(code, what + ": XNNPACK returned " + XnnStatusName(s));
}

// Products under 2^20 multiply-adds run on the calling thread. Measured on the shipped model's
// size, batch 1, on a 2-core machine loaded by other processes (wall time, 2 threads vs 1):
// with 2^16 fp32 was 2.2-2.3x and int8 2.3-3.6x slower than one thread; with 2^20 1.2x and
// 1.3-1.6x (one row's fc1 / fc2 / attention projections are under it, lm_head and the
// encoder's products over it).
constexpr size_t kMinParallelMacs = kMinParallelWork;

// Workers go back to the scheduler after each parallel call instead of spinning for the next
// one: on a machine whose cores are busy with other processes a spinning worker takes the core
// from the thread that would give it work.
constexpr uint32_t kPoolFlags = PTHREADPOOL_FLAG_YIELD_WORKERS;

}  // namespace

void WidenRows(const WeightView& w, float* out) {
  const size_t n = w.elements();
  switch (w.dtype) {
    case WeightType::kF32:
      std::memcpy(out, w.f32(), n * sizeof(float));
      return;
    case WeightType::kF16:
      for (size_t i = 0; i < n; ++i) out[i] = F16ToFloat(w.f16()[i]);
      return;
    case WeightType::kI8:
      for (size_t r = 0; r < w.rows; ++r) {
        const float s = w.scale[r];
        for (size_t c = 0; c < w.cols; ++c) {
          out[r * w.cols + c] = static_cast<float>(w.i8()[r * w.cols + c]) * s;
        }
      }
      return;
  }
}

Status InitXnnpack() {
  static std::once_flag once;
  static xnn_status status = xnn_status_uninitialized;
  std::call_once(once, [] { status = xnn_initialize(nullptr); });
  return FromXnn(status, "xnn_initialize");
}

namespace {

Fp16Support Detect() {
  Fp16Support s;
#if defined(__aarch64__)
  // xnn_initialize initialised cpuinfo; calling it again is a cheap no-op.
  if (!cpuinfo_initialize()) {
    s.reason = "cpuinfo_initialize failed";
    return s;
  }
  if (!cpuinfo_has_arm_neon_fp16_arith()) {
    s.reason = "the CPU has no fp16 arithmetic (cpuinfo: no ARMv8.2 FP16 arithmetic)";
    return s;
  }
  // XNNPACK decides on its own CPU tables; its answer is the one that counts.
  const uint16_t one = 0x3c00, zero = 0;
  xnn_operator_t op = nullptr;
  const xnn_status st = xnn_create_fully_connected_nc_f16(1, 1, 1, 1, &one, &zero, -INFINITY,
                                                          INFINITY, 0, &op);
  if (op != nullptr) xnn_delete_operator(op);
  if (st != xnn_status_success) {
    s.reason = std::string("cpuinfo reports fp16 arithmetic but XNNPACK's f16 operator returned ") +
               XnnStatusName(st);
    return s;
  }
  s.available = true;
  s.reason = "the CPU has fp16 arithmetic (ARMv8.2 FP16) and XNNPACK f16 kernels";
#elif defined(__arm__)
  s.reason = "32-bit ARM: Debian's 2022 XNNPACK has no aarch32 fp16 arithmetic kernels";
#else
  s.reason = "not an ARM CPU: XNNPACK would emulate fp16 arithmetic, slower than F32";
#endif
  return s;
}

}  // namespace

const Fp16Support& DetectFp16Arithmetic() {
  static const Fp16Support support = Detect();
  return support;
}

Result<ThreadPool> ThreadPool::Create(int num_threads) {
  if (num_threads < 1) {
    return InvalidArgument("num_threads must be >= 1, found " + std::to_string(num_threads));
  }
  ThreadPool pool;
  pool.threads_ = num_threads;
  if (num_threads > 1) {
    pool.pool_ = pthreadpool_create(static_cast<size_t>(num_threads));
    if (pool.pool_ == nullptr) {
      return BackendError("pthreadpool_create(" + std::to_string(num_threads) + ") failed");
    }
  }
  return pool;
}

ThreadPool::ThreadPool(ThreadPool&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), threads_(other.threads_) {}

ThreadPool& ThreadPool::operator=(ThreadPool&& other) noexcept {
  if (this != &other) {
    if (pool_ != nullptr) pthreadpool_destroy(pool_);
    pool_ = std::exchange(other.pool_, nullptr);
    threads_ = other.threads_;
  }
  return *this;
}

ThreadPool::~ThreadPool() {
  if (pool_ != nullptr) pthreadpool_destroy(pool_);
}

Result<FullyConnected> FullyConnected::Create(const FcPart* parts, size_t num_parts,
                                              const FcParams& params, std::string name) {
  if (num_parts == 0) return InternalError(name + ": no weights");
  const size_t in = parts[0].weight.cols;
  size_t out = 0;
  bool all_int8 = true;
  for (size_t i = 0; i < num_parts; ++i) all_int8 = all_int8 && parts[i].weight.dtype == WeightType::kI8;
  bool all_f32 = true;
  bool widen = num_parts > 1;
  for (size_t i = 0; i < num_parts; ++i) {
    const FcPart& p = parts[i];
    if (p.bias.dtype != WeightType::kF32) return InternalError(name + ": bias is not F32");
    if (p.weight.cols != in || p.bias.elements() != p.weight.rows) {
      return InternalError(name + ": fused parts disagree on shapes");
    }
    widen = widen || p.weight.dtype != WeightType::kF32;
    all_f32 = all_f32 && p.weight.dtype == WeightType::kF32;
    out += p.weight.rows;
  }
  if (all_int8) {
    FullyConnected fc;
    fc.in_ = in;
    fc.out_ = out;
    fc.name_ = std::move(name);
    HW_RETURN_IF_ERROR(fc.CreateInt8(parts, num_parts, params));
    return fc;
  }
  bool all_f16 = params.f16_scratch != nullptr;
  for (size_t i = 0; i < num_parts; ++i) all_f16 = all_f16 && parts[i].weight.dtype == WeightType::kF16;
  if (all_f16) {
    FullyConnected fc;
    fc.in_ = in;
    fc.out_ = out;
    fc.name_ = std::move(name);
    HW_RETURN_IF_ERROR(fc.CreateF16(parts, num_parts, params));
    return fc;
  }
  // XNNPACK packs the weights into its own F32 buffer at creation, so a fused operator, or one
  // of F16 / I8 weights widened here, is created from a temporary F32 copy; a single F32 part
  // is passed in place. (F16 parts reach here when the f16 path is off: on x86 Debian's 2022
  // XNNPACK emulates fp16 and its f16 fully-connected ran 4x slower than F32, and CPUs without
  // ARMv8.2 FP16 have no f16 kernels at all; DetectFp16Arithmetic decides.)
  std::vector<float> kernel, bias;
  const float* k = parts[0].weight.f32();
  const float* b = parts[0].bias.f32();
  if (widen) {
    kernel.resize(out * in);
    bias.resize(out);
    size_t row = 0;
    for (size_t i = 0; i < num_parts; ++i) {
      const FcPart& p = parts[i];
      WidenRows(p.weight, kernel.data() + row * in);
      std::memcpy(bias.data() + row, p.bias.f32(), p.weight.rows * sizeof(float));
      row += p.weight.rows;
    }
    k = kernel.data();
    b = bias.data();
  }
  FullyConnected fc;
  fc.in_ = in;
  fc.out_ = out;
  fc.name_ = std::move(name);
  const size_t in_stride = params.input_stride != 0 ? params.input_stride : in;
  const size_t out_stride = params.output_stride != 0 ? params.output_stride : out;
  const xnn_status s = xnn_create_fully_connected_nc_f32(
      in, out, in_stride, out_stride, k, b, params.output_min, params.output_max,
      /*flags=*/XNN_FLAG_YIELD_WORKERS, &fc.op_);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + fc.name_ + " [" + std::to_string(out) + " x " +
                                    std::to_string(in) + "]"));
  if (all_f32 && kernels::HaveFastF32Gemv()) {
    fc.out_min_ = params.output_min;
    fc.out_max_ = params.output_max;
    for (size_t i = 0; i < num_parts; ++i) {
      fc.gemv_parts_.push_back({parts[i].weight.f32(), parts[i].bias.f32(), parts[i].weight.rows});
    }
  }
  return fc;
}

FullyConnected::FullyConnected(FullyConnected&& other) noexcept
    : int8_(std::move(other.int8_)),
      gemv_parts_(std::move(other.gemv_parts_)),
      out_min_(other.out_min_),
      out_max_(other.out_max_),
      op_(std::exchange(other.op_, nullptr)),
      to_f16_(std::exchange(other.to_f16_, nullptr)),
      from_f16_(std::exchange(other.from_f16_, nullptr)),
      f16_(std::exchange(other.f16_, nullptr)),
      in_(other.in_),
      out_(other.out_),
      name_(std::move(other.name_)) {}

FullyConnected& FullyConnected::operator=(FullyConnected&& other) noexcept {
  if (this != &other) {
    Reset();
    op_ = std::exchange(other.op_, nullptr);
    to_f16_ = std::exchange(other.to_f16_, nullptr);
    from_f16_ = std::exchange(other.from_f16_, nullptr);
    f16_ = std::exchange(other.f16_, nullptr);
    int8_ = std::move(other.int8_);
    gemv_parts_ = std::move(other.gemv_parts_);
    out_min_ = other.out_min_;
    out_max_ = other.out_max_;
    in_ = other.in_;
    out_ = other.out_;
    name_ = std::move(other.name_);
  }
  return *this;
}

FullyConnected::~FullyConnected() { Reset(); }

void FullyConnected::Reset() {
  for (xnn_operator** op : {&op_, &to_f16_, &from_f16_}) {
    if (*op != nullptr) xnn_delete_operator(*op);
    *op = nullptr;
  }
  f16_ = nullptr;
}

Status FullyConnected::CreateF16(const FcPart* parts, size_t num_parts, const FcParams& params) {
  const F16Scratch* scratch = params.f16_scratch;
  // Weights: a single part is read in place from the model (XNNPACK packs it into its own F16
  // buffer, half the size of the F32 path's), fused parts are stacked into a temporary F16
  // copy. Biases are F32 in the file and narrowed here (the f16 operator adds an F16 bias).
  std::vector<uint16_t> kernel, bias(out_);
  const uint16_t* k = parts[0].weight.f16();
  if (num_parts > 1) kernel.resize(out_ * in_);
  size_t row = 0;
  for (size_t i = 0; i < num_parts; ++i) {
    const FcPart& p = parts[i];
    if (num_parts > 1) std::memcpy(kernel.data() + row * in_, p.weight.f16(), p.weight.elements() * 2);
    for (size_t r = 0; r < p.weight.rows; ++r) bias[row + r] = FloatToF16(p.bias.f32()[r]);
    row += p.weight.rows;
  }
  if (num_parts > 1) k = kernel.data();
  const std::string shape = " [" + std::to_string(out_) + " x " + std::to_string(in_) + "]";
  const size_t in_stride = params.input_stride != 0 ? params.input_stride : in_;
  const size_t out_stride = params.output_stride != 0 ? params.output_stride : out_;
  xnn_status s = xnn_create_fully_connected_nc_f16(in_, out_, in_, out_, k, bias.data(),
                                                   params.output_min, params.output_max,
                                                   /*flags=*/XNN_FLAG_YIELD_WORKERS, &op_);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + name_ + shape + " (f16)"));
  s = xnn_create_convert_nc_f32_f16(in_, in_stride, in_, /*flags=*/0, &to_f16_);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + name_ + " input conversion to f16"));
  s = xnn_create_convert_nc_f16_f32(out_, out_, out_stride, /*flags=*/0, &from_f16_);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + name_ + " output conversion from f16"));
  f16_ = scratch;
  return Status::Ok();
}

Status FullyConnected::RunF16(size_t rows, const float* x, float* y, pthreadpool* pool) const {
  if (rows * in_ > f16_->in_elements || rows * out_ > f16_->out_elements) {
    return InternalError(name_ + ": " + std::to_string(rows) + " rows exceed the f16 scratch");
  }
  if (rows * in_ * out_ < kMinParallelMacs) pool = nullptr;
  // The conversions are O(rows * channels) against the product's O(rows * in * out); they stay
  // on the calling thread unless the product itself is parallel.
  xnn_status s = xnn_setup_convert_nc_f32_f16(to_f16_, rows, x, f16_->in, pool);
  if (s == xnn_status_success) s = xnn_run_operator(to_f16_, pool);
  if (s != xnn_status_success) return FromXnn(s, "converting the input of " + name_ + " to f16");
  s = xnn_setup_fully_connected_nc_f16(op_, rows, f16_->in, f16_->out, pool);
  if (s != xnn_status_success) return FromXnn(s, "setting up " + name_ + " (f16)");
  s = xnn_run_operator(op_, pool);
  if (s != xnn_status_success) return FromXnn(s, "running " + name_ + " (f16)");
  s = xnn_setup_convert_nc_f16_f32(from_f16_, rows, f16_->out, y, pool);
  if (s == xnn_status_success) s = xnn_run_operator(from_f16_, pool);
  if (s != xnn_status_success) return FromXnn(s, "converting the output of " + name_ + " from f16");
  return Status::Ok();
}

Status FullyConnected::CreateInt8(const FcPart* parts, size_t num_parts, const FcParams& params) {
  Int8Weights& q = int8_;
  if (params.int8_scratch == nullptr || params.int8_scratch->max_cols < in_) {
    return InternalError(name_ + ": int8 weights need the Translator's int8 scratch (" +
                         std::to_string(in_) + " columns)");
  }
  q.scratch = params.int8_scratch;
  q.in_stride = params.input_stride != 0 ? params.input_stride : in_;
  q.out_stride = params.output_stride != 0 ? params.output_stride : out_;
  q.out_min = params.output_min;
  q.out_max = params.output_max;
  if (num_parts == 1) {
    q.w = parts[0].weight.i8();
    q.scale = parts[0].weight.scale;
    q.bias = parts[0].bias.f32();
    return Status::Ok();
  }
  q.w_owned.reserve(out_ * in_);
  for (size_t i = 0; i < num_parts; ++i) {
    const FcPart& p = parts[i];
    q.w_owned.insert(q.w_owned.end(), p.weight.i8(), p.weight.i8() + p.weight.elements());
    q.scale_owned.insert(q.scale_owned.end(), p.weight.scale, p.weight.scale + p.weight.rows);
    q.bias_owned.insert(q.bias_owned.end(), p.bias.f32(), p.bias.f32() + p.weight.rows);
  }
  q.w = q.w_owned.data();
  q.scale = q.scale_owned.data();
  q.bias = q.bias_owned.data();
  return Status::Ok();
}

Status FullyConnected::RunInt8(size_t rows, const float* x, float* y, pthreadpool* pool) const {
  const Int8Weights& q = int8_;
  if (rows > q.scratch->max_rows) {
    return InternalError(name_ + ": " + std::to_string(rows) + " rows exceed the int8 scratch");
  }
  kernels::QuantizeRowsDynamic(x, rows, in_, q.in_stride, q.scratch->q, q.scratch->scale);
  kernels::Int8GemmArgs a;
  a.xq = q.scratch->q;
  a.x_scale = q.scratch->scale;
  a.rows = rows;
  a.k = in_;
  a.w = q.w;
  a.w_scale = q.scale;
  a.bias = q.bias;
  a.y = y;
  a.y_stride = q.out_stride;
  a.out_min = q.out_min;
  a.out_max = q.out_max;
  if (pool == nullptr || rows * in_ * out_ < kMinParallelMacs) {
    kernels::Int8Gemm(a, 0, out_);
    return Status::Ok();
  }
  // Tiles of 64 output channels (a multiple of the kernel's 4), one task each.
  constexpr size_t kTile = 64;
  pthreadpool_parallelize_1d_tile_1d(
      pool,
      [](void* context, size_t begin, size_t count) {
        kernels::Int8Gemm(*static_cast<const kernels::Int8GemmArgs*>(context), begin, begin + count);
      },
      &a, out_, kTile, kPoolFlags);
  return Status::Ok();
}

void FullyConnected::RunGemvRange(const float* x, float* y, size_t begin, size_t end) const {
  size_t first = 0;  // output channel of the part's first row
  for (const F32Part& p : gemv_parts_) {
    const size_t lo = std::max(begin, first), hi = std::min(end, first + p.rows);
    if (lo < hi) {
      kernels::F32GemvArgs a;
      a.x = x;
      a.k = in_;
      a.w = p.w;
      a.bias = p.bias;
      a.y = y + first;
      a.out_min = out_min_;
      a.out_max = out_max_;
      kernels::F32Gemv(a, lo - first, hi - first);
    }
    first += p.rows;
  }
}

void FullyConnected::RunGemv(const float* x, float* y, pthreadpool* pool) const {
  if (pool == nullptr || in_ * out_ < kMinParallelMacs) {
    RunGemvRange(x, y, 0, out_);
    return;
  }
  struct Context {
    const FullyConnected* fc;
    const float* x;
    float* y;
  } context{this, x, y};
  // Tiles of 64 output channels (even, as the kernel's pairs), one task each.
  pthreadpool_parallelize_1d_tile_1d(
      pool,
      [](void* c, size_t begin, size_t count) {
        const Context& ctx = *static_cast<const Context*>(c);
        ctx.fc->RunGemvRange(ctx.x, ctx.y, begin, begin + count);
      },
      &context, out_, 64, kPoolFlags);
}

Status FullyConnected::Run(size_t rows, const float* x, float* y, pthreadpool* pool) const {
  if (rows == 0) return Status::Ok();
  if (int8_.w != nullptr) return RunInt8(rows, x, y, pool);
  if (f16_ != nullptr) return RunF16(rows, x, y, pool);
  if (rows == 1 && !gemv_parts_.empty()) {
    RunGemv(x, y, pool);
    return Status::Ok();
  }
  if (op_ == nullptr) return InternalError(name_ + ": operator was not created");
  // Waking the pool's workers costs microseconds (far more on a loaded machine); a product this
  // small is done sooner by the calling thread alone.
  if (rows * in_ * out_ < kMinParallelMacs) pool = nullptr;
  xnn_status s = xnn_setup_fully_connected_nc_f32(op_, rows, x, y, pool);
  if (s != xnn_status_success) return FromXnn(s, "setting up " + name_);
  s = xnn_run_operator(op_, pool);
  if (s != xnn_status_success) return FromXnn(s, "running " + name_);
  return Status::Ok();
}

}  // namespace headwise
