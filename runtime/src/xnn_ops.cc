#include "xnn_ops.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

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

constexpr size_t kMinParallelMacs = size_t{1} << 16;

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
  for (size_t i = 0; i < num_parts; ++i) {
    const FcPart& p = parts[i];
    if (p.weight.dtype != WeightType::kF32 || p.bias.dtype != WeightType::kF32) {
      return InternalError(name + ": only F32 weights are executed by this build");
    }
    if (p.weight.cols != in || p.bias.elements() != p.weight.rows) {
      return InternalError(name + ": fused parts disagree on shapes");
    }
    out += p.weight.rows;
  }
  // XNNPACK packs the weights into its own buffer at creation, so a fused operator can be
  // created from a temporary concatenation; a single part is passed in place.
  std::vector<float> kernel, bias;
  const float* k = parts[0].weight.f32();
  const float* b = parts[0].bias.f32();
  if (num_parts > 1) {
    kernel.resize(out * in);
    bias.resize(out);
    size_t row = 0;
    for (size_t i = 0; i < num_parts; ++i) {
      const FcPart& p = parts[i];
      std::memcpy(kernel.data() + row * in, p.weight.f32(), p.weight.elements() * sizeof(float));
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
      /*flags=*/0, &fc.op_);
  HW_RETURN_IF_ERROR(FromXnn(s, "creating " + fc.name_ + " [" + std::to_string(out) + " x " +
                                    std::to_string(in) + "]"));
  return fc;
}

FullyConnected::FullyConnected(FullyConnected&& other) noexcept
    : op_(std::exchange(other.op_, nullptr)),
      in_(other.in_),
      out_(other.out_),
      name_(std::move(other.name_)) {}

FullyConnected& FullyConnected::operator=(FullyConnected&& other) noexcept {
  if (this != &other) {
    if (op_ != nullptr) xnn_delete_operator(op_);
    op_ = std::exchange(other.op_, nullptr);
    in_ = other.in_;
    out_ = other.out_;
    name_ = std::move(other.name_);
  }
  return *this;
}

FullyConnected::~FullyConnected() {
  if (op_ != nullptr) xnn_delete_operator(op_);
}

Status FullyConnected::Run(size_t rows, const float* x, float* y, pthreadpool* pool) const {
  if (rows == 0) return Status::Ok();
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
