#include "xnn_ops.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
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

namespace {

}  // namespace

Status InitXnnpack() {
  static std::once_flag once;
  static xnn_status status = xnn_status_uninitialized;
  std::call_once(once, [] { status = xnn_initialize(nullptr); });
  return FromXnn(status, "xnn_initialize");
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
  // XNNPACK packs the weights into its own F32 buffer at creation, so a fused operator, or one
  // of F16 / I8 weights widened here, is created from a temporary F32 copy; a single F32 part
  // is passed in place. (Debian's 2022 XNNPACK has an F16 fully-connected operator, but on
  // x86 it ran 4x slower than F32 for a 1 x 256 -> 1024 product and takes F16 activations;
  // F16 is a storage format here.)
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
      in_(other.in_),
      out_(other.out_),
      name_(std::move(other.name_)) {}

FullyConnected& FullyConnected::operator=(FullyConnected&& other) noexcept {
  if (this != &other) {
    if (op_ != nullptr) xnn_delete_operator(op_);
    op_ = std::exchange(other.op_, nullptr);
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

FullyConnected::~FullyConnected() {
  if (op_ != nullptr) xnn_delete_operator(op_);
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
