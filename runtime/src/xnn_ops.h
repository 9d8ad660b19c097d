// runtime/src/xnn_ops.h: the XNNPACK boundary. Every matrix multiply against weights goes
// through FullyConnected; everything else in the runtime is our own loops.
//
// Lifetime and ownership
//   - InitXnnpack() initialises XNNPACK once per process (thread-safe; later calls return the
//     first call's result). XNNPACK is never deinitialised: operators of any Translator may
//     exist until process exit.
//   - ThreadPool owns a pthreadpool; with one thread it holds none (get() == nullptr, work runs
//     on the calling thread). One pool per Translator, shared by all its operators.
//   - FullyConnected owns one XNNPACK operator and, through it, a packed copy of its weights.
//     Where the single-row fp32 kernel (kernels/f32_gemv.h, x86 AVX2 + FMA) or the int8 kernel
//     is used, it also reads F32 / I8 weights in place: the Model must outlive the operator (a
//     Translator holds its Model). Move-only.
// Errors: xnn_status values are translated to kBackend (kOutOfMemory for
// xnn_status_out_of_memory) with the XNNPACK status name and the operator name in the message.
#ifndef HEADWISE_RUNTIME_XNN_OPS_H_
#define HEADWISE_RUNTIME_XNN_OPS_H_

#include <cstddef>
#include <limits>
#include <cstdint>
#include <string>
#include <vector>

#include "headwise/status.hpp"
#include "weights.h"

struct xnn_operator;
struct pthreadpool;

namespace headwise {

Status InitXnnpack();

// Whether XNNPACK's f16 operators run in real fp16 arithmetic here: aarch64 with ARMv8.2 FP16
// arithmetic (cpuinfo_has_arm_neon_fp16_arith()) and an f16 fully-connected operator that
// XNNPACK agrees to create (it answers xnn_status_unsupported_hardware otherwise). Always false
// on other architectures: x86 would emulate fp16 (slower than F32), and Debian's 2022 XNNPACK
// has no aarch32 fp16 arithmetic kernels. Computed once per process; call after InitXnnpack.
struct Fp16Support {
  bool available = false;
  std::string reason;  // why not (or what was found), for messages
};
const Fp16Support& DetectFp16Arithmetic();

class ThreadPool {
 public:
  // Errors: kInvalidArgument for num_threads < 1, kBackend when pthreadpool cannot start.
  static Result<ThreadPool> Create(int num_threads);
  ThreadPool() = default;
  ThreadPool(ThreadPool&& other) noexcept;
  ThreadPool& operator=(ThreadPool&& other) noexcept;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  pthreadpool* get() const { return pool_; }
  int num_threads() const { return threads_; }

 private:
  pthreadpool* pool_ = nullptr;
  int threads_ = 1;
};

// The F32 values of a weight matrix (F16 widened exactly, I8 times its row scale) written
// row-major to `out` (w.elements() floats).
void WidenRows(const WeightView& w, float* out);

// One output block of a fused operator: weight [rows, in] and bias [rows].
struct FcPart {
  WeightView weight;
  WeightView bias;
};

// Scratch for the int8 path's quantized input rows, shared by all operators of a Translator
// (they run one at a time). Points into the Translator's arena.
struct Int8Scratch {
  int8_t* q = nullptr;      // [max_rows, max_cols]
  float* scale = nullptr;   // [max_rows]
  size_t max_rows = 0;
  size_t max_cols = 0;
};

// The f16 path's activation copies, shared by all operators of a Translator (they run one
// at a time). Points into the Translator's arena; sized for the largest rows * channels of any
// operator's input and of any operator's output.
struct F16Scratch {
  uint16_t* in = nullptr;   // [in_elements]
  uint16_t* out = nullptr;  // [out_elements]
  size_t in_elements = 0;
  size_t out_elements = 0;
};

struct FcParams {
  size_t input_stride = 0;   // floats between input rows; 0 = input channels
  size_t output_stride = 0;  // floats between output rows; 0 = output channels
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
  // Required when every part is I8 (the int8 path); must outlive the operator.
  const Int8Scratch* int8_scratch = nullptr;
  // Non-null: operators whose parts are all F16 run in fp16 arithmetic through this scratch
  // (the caller checked DetectFp16Arithmetic()); must outlive the operator.
  const F16Scratch* f16_scratch = nullptr;
};

class FullyConnected {
 public:
  // y[r, :] = clamp(x[r, :] . W^T + b) where W (and b) stack the parts' rows in order, so one
  // operator computes e.g. q, k and v side by side: y = [q | k | v]. `name` is kept for error
  // messages. All parts must share the input width.
  // Weights: all parts I8 -> the int8 path (kernels/int8_gemm.h: activations quantized per row
  // at run time, int32 sums; a single part is read in place from the model, fused parts are
  // concatenated into a copy the operator owns). All parts F16 and params.f16_scratch set ->
  // the f16 path: x narrowed to F16 (xnn convert_nc_f32_f16), XNNPACK's f16 fully-connected
  // (packing the F16 weights read in place; biases narrowed), y widened back to F32. Otherwise
  // XNNPACK F32, F16/I8 parts widened.
  static Result<FullyConnected> Create(const FcPart* parts, size_t num_parts,
                                       const FcParams& params, std::string name);
  FullyConnected() = default;
  FullyConnected(FullyConnected&& other) noexcept;
  FullyConnected& operator=(FullyConnected&& other) noexcept;
  FullyConnected(const FullyConnected&) = delete;
  FullyConnected& operator=(const FullyConnected&) = delete;
  ~FullyConnected();

  // Runs on `rows` rows; no heap allocation. rows == 0 does nothing. Products under 2^20
  // multiply-adds (kMinParallelWork) run on the calling thread even when a pool is given. One
  // row with F32 weights on x86 with AVX2 + FMA runs kernels::F32Gemv on the weights in place
  // (batch-1 decoding); more rows, and other CPUs, run XNNPACK.
  Status Run(size_t rows, const float* x, float* y, pthreadpool* pool) const;

  bool valid() const { return op_ != nullptr || int8_.w != nullptr; }
  bool is_int8() const { return int8_.w != nullptr; }
  bool is_f16() const { return f16_ != nullptr; }
  size_t input_channels() const { return in_; }
  size_t output_channels() const { return out_; }

 private:
  struct Int8Weights {
    const int8_t* w = nullptr;        // [out, in]: the model's tensor or w_owned
    const float* scale = nullptr;     // [out]
    const float* bias = nullptr;      // [out]
    std::vector<int8_t> w_owned;      // fused parts only
    std::vector<float> scale_owned, bias_owned;
    const Int8Scratch* scratch = nullptr;
    size_t in_stride = 0, out_stride = 0;
    float out_min = 0, out_max = 0;
  };
  Status CreateInt8(const FcPart* parts, size_t num_parts, const FcParams& params);
  Status RunInt8(size_t rows, const float* x, float* y, pthreadpool* pool) const;
  // One part of an F32 operator, read in place by the single-row kernel.
  struct F32Part {
    const float* w = nullptr;     // [rows, in_]
    const float* bias = nullptr;  // [rows]
    size_t rows = 0;
  };
  void RunGemv(const float* x, float* y, pthreadpool* pool) const;
  void RunGemvRange(const float* x, float* y, size_t begin, size_t end) const;
  Status CreateF16(const FcPart* parts, size_t num_parts, const FcParams& params);
  Status RunF16(size_t rows, const float* x, float* y, pthreadpool* pool) const;
  void Reset();

  Int8Weights int8_;
  std::vector<F32Part> gemv_parts_;  // empty: one row runs XNNPACK too
  float out_min_ = 0, out_max_ = 0;
  xnn_operator* op_ = nullptr;
  // The f16 path: op_ is the f16 operator, these narrow its input and widen its output.
  xnn_operator* to_f16_ = nullptr;
  xnn_operator* from_f16_ = nullptr;
  const F16Scratch* f16_ = nullptr;
  size_t in_ = 0;
  size_t out_ = 0;
  std::string name_;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_XNN_OPS_H_
