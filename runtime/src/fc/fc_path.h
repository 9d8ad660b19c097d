// runtime/src/fc/fc_path.h: the interface between FullyConnected (the dispatcher,
// fully_connected.cc) and the kernel families that compute it, one file each:
//   fc_int8.cc      all parts I8: activations quantized per row at run time, kernels/int8_gemm.h
//                   (which dispatches to the CPU's int8 kernel); "int8: <kernel>"
//   fc_f16.cc       all parts F16 and an f16 scratch: input narrowed to F16, XNNPACK's f16
//                   fully-connected, output widened back; "fp16: xnnpack"
//   fc_f32_gemm.cc  F32 / F16 parts read in place, kernels/f32_gemm.h (x86 with AVX2, FMA,
//                   F16C; the AVX-512 family where the CPU has it); "fp32: f32-gemm-avx512",
//                   "fp32: f32-gemm-avx2"
//   fc_xnn_f32.cc   anything else: XNNPACK f32, F16 / I8 parts widened; "fp32: xnnpack"
//   fc_f32_gemv.cc  one row of F32 parts read in place, kernels/f32_gemv.h; "fp32: f32-gemv-avx2"
//
// Weights held once: a path either reads the model's weights in place or packs them into a copy
// of its own (XNNPACK), and then releases the pages of the matrices it copied from a mapped
// file (FcParams::weight_pages) so they stop counting in the process's memory. A one-row path
// reading in place is only added beside a path that reads in place too (HoldsWeightCopy()).
//
// Adding a kernel family: a file fc_<family>.cc defining an FcPathFactory (declared at the end
// of this header) and one entry in kPaths or kOneRowPaths of fully_connected.cc, before the
// families it should win over. A factory returns nullptr when the family does not apply to the
// spec (weight format, CPU, options), a path when it does, an error when it applies but cannot
// be created. A new int8 kernel for the same weights and scratch plugs into
// kernels/int8_gemm.cc's dispatch instead and keeps fc_int8.cc.
#ifndef HEADWISE_RUNTIME_FC_FC_PATH_H_
#define HEADWISE_RUNTIME_FC_FC_PATH_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/mapped_file.h"
#include "fc/fully_connected.h"
#include "headwise/status.hpp"
#include "parallel.h"

namespace headwise {

// What a path is created from; the dispatcher has checked that every part has F32 biases of
// the part's rows and the shared input width. Pointers are valid during the factory call only.
struct FcSpec {
  const FcPart* parts = nullptr;
  size_t num_parts = 0;
  size_t in = 0;          // input channels
  size_t out = 0;         // output channels: the parts' rows summed
  size_t in_stride = 0;   // params.input_stride resolved (never 0)
  size_t out_stride = 0;  // params.output_stride resolved (never 0)
  const FcParams* params = nullptr;
  const std::string* name = nullptr;  // for error messages; copy it to keep it

  bool AllWeights(DType t) const {
    for (size_t i = 0; i < num_parts; ++i) {
      if (parts[i].weight.dtype != t) return false;
    }
    return true;
  }

  // For paths that copied the weights into a buffer of their own: drops the parts' weight
  // pages of a mapped file from the resident set (params->weight_pages; nothing when null).
  void ReleaseWeightPages() const {
    if (params->weight_pages == nullptr) return;
    for (size_t i = 0; i < num_parts; ++i) {
      const WeightView& w = parts[i].weight;
      params->weight_pages->ReleasePages(w.data, w.elements() * DTypeSize(w.dtype));
    }
  }
};

// One way of computing an operator, fixed at creation.
class FcPath {
 public:
  virtual ~FcPath() = default;
  // y = clamp(x . W^T + b) on `rows` >= 1 rows (strides and clamp of the spec; a one-row path
  // is only called with rows == 1). No heap allocation. `workers.pool` may be null; the path
  // splits the work over it only where workers.Split says it pays.
  virtual Status Run(size_t rows, const float* x, float* y, Workers workers) const = 0;
  // "<arithmetic>: <kernel>" for `rows` rows, e.g. "int8: avx2".
  virtual std::string KernelName(size_t rows) const = 0;
  // True when the path computes from a copy of the weights of its own (XNNPACK's packed
  // buffer), false when it reads the model's weights in place.
  virtual bool HoldsWeightCopy() const { return false; }
};

// For the in-place families, whose weights are parts stacked along the output channels (each
// with a `rows` member): calls fn(part, first, lo, hi) for each part that overlaps output
// channels [begin, end), first being the channel of its first row and [lo, hi) the overlap
// counted within the part.
template <typename Part, typename Fn>
void ForPartsInRange(const std::vector<Part>& parts, size_t begin, size_t end, Fn&& fn) {
  size_t first = 0;
  for (const Part& p : parts) {
    const size_t lo = std::max(begin, first), hi = std::min(end, first + p.rows);
    if (lo < hi) fn(p, first, lo - first, hi - first);
    first += p.rows;
  }
}

// nullptr: the family does not apply to `spec`.
using FcPathFactory = Result<std::unique_ptr<const FcPath>> (*)(const FcSpec& spec);

Result<std::unique_ptr<const FcPath>> CreateInt8Path(const FcSpec& spec);     // fc_int8.cc
Result<std::unique_ptr<const FcPath>> CreateF16Path(const FcSpec& spec);      // fc_f16.cc
Result<std::unique_ptr<const FcPath>> CreateF32GemmPath(const FcSpec& spec);  // fc_f32_gemm.cc
Result<std::unique_ptr<const FcPath>> CreateXnnF32Path(const FcSpec& spec);   // fc_xnn_f32.cc
Result<std::unique_ptr<const FcPath>> CreateF32GemvPath(const FcSpec& spec);  // fc_f32_gemv.cc

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_FC_FC_PATH_H_
