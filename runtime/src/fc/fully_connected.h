// runtime/src/fc/fully_connected.h: every matrix product against weights goes through
// FullyConnected, a small dispatcher that picks one kernel family (fc_path.h) per operator
// when it is created.
//
// Lifetime and ownership: a FullyConnected owns its path (an XNNPACK operator with its packed
// copy of the weights, or pointers to the weights). Paths that read F32 / F16 / I8 weights in
// place (the in-place fp32 kernels, the int8 path) need the Model to outlive the operator
// (a Translator holds its Model). The scratch given in FcParams must outlive it too. Move-only.
// Weights are held once: either read in place or copied, and then their pages of a mapped file
// released (FcParams::weight_pages), never both (fc_path.h).
// Errors: XNNPACK statuses as xnn_backend.h, with the operator's name in the message.
#ifndef HEADWISE_RUNTIME_FC_FULLY_CONNECTED_H_
#define HEADWISE_RUNTIME_FC_FULLY_CONNECTED_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "headwise/status.hpp"
#include "parallel.h"
#include "weights.h"


namespace headwise {

class FcPath;
class Int8PackedStore;
class MappedFile;

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
  // Non-null: the mapped file the weights point into (Model::Impl::file). A path that packs the
  // weights into a copy of its own drops their pages from the resident set once packed
  // (MappedFile::ReleasePages); they are read again from the file if anything else reads them.
  // Used during Create only.
  const MappedFile* weight_pages = nullptr;
  // Non-null (with weight_pages): the int8 path reads the packed copies this store keeps
  // of the parts' matrices where this CPU packs them (int8_packed_store.h: once per Model,
  // shared, the row-major pages released). Null for matrices that are also read row by row
  // (lm_head, tied to the embeddings and gathered by the shortlist). Must outlive the operator.
  Int8PackedStore* int8_packed = nullptr;
};

class FullyConnected {
 public:
  // y[r, :] = clamp(x[r, :] . W^T + b) where W (and b) stack the parts' rows in order, so one
  // operator computes e.g. q, k and v side by side: y = [q | k | v]. `name` is kept for error
  // messages. All parts must share the input width; biases are F32.
  // Paths (fully_connected.cc tries them in order, fc_path.h lists what each does):
  //   all parts I8                          -> int8 (fc_int8.cc)
  //   all parts F16 and params.f16_scratch  -> fp16 arithmetic (fc_f16.cc)
  //   parts F32 / F16, where kernels/f32_gemm.h has a vector kernel (x86 AVX2 + FMA + F16C)
  //                                         -> the weights in place (fc_f32_gemm.cc)
  //   otherwise                             -> XNNPACK f32, F16 / I8 parts widened (fc_xnn_f32.cc)
  // and for one row with all parts F32 beside a path that reads in place, where
  // kernels/f32_gemv.h has a vector kernel (x86 AVX2 + FMA), the gemv on the weights in place
  // (fc_f32_gemv.cc; batch-1 decoding).
  static Result<FullyConnected> Create(const FcPart* parts, size_t num_parts,
                                       const FcParams& params, std::string name);
  FullyConnected();
  FullyConnected(FullyConnected&& other) noexcept;
  FullyConnected& operator=(FullyConnected&& other) noexcept;
  FullyConnected(const FullyConnected&) = delete;
  FullyConnected& operator=(const FullyConnected&) = delete;
  ~FullyConnected();

  // Runs on `rows` rows; no heap allocation. rows == 0 does nothing. Products that
  // Workers::Split (parallel.h) finds too small to wake the workers for run on the calling
  // thread even when a pool is given. A bare pthreadpool* converts to yielding Workers.
  Status Run(size_t rows, const float* x, float* y, Workers workers) const;

  // The kernel path that `rows` rows run, "<arithmetic>: <kernel>", e.g. "int8: avx2",
  // "fp32: xnnpack", "fp32: f32-gemm-avx512", "fp32: f32-gemm-avx2", "fp32: f32-gemv-avx2",
  // "fp16: xnnpack"; "none"
  // when not created.
  std::string KernelName(size_t rows) const;

  bool valid() const { return path_ != nullptr; }
  // True when the operator computes from a packed copy of its weights of its own (XNNPACK),
  // false when it reads the model's weights in place (or is not created).
  bool HoldsWeightCopy() const;
  size_t input_channels() const { return in_; }
  size_t output_channels() const { return out_; }

 private:
  std::unique_ptr<const FcPath> path_;     // any number of rows
  std::unique_ptr<const FcPath> one_row_;  // rows == 1 when set
  size_t in_ = 0;
  size_t out_ = 0;
  std::string name_;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_FC_FULLY_CONNECTED_H_
