#include "fc/fully_connected.h"

#include <utility>

#include "fc/fc_path.h"

namespace headwise {
namespace {

// Paths for any number of rows, tried in order: the first that applies serves the operator.
// The last one applies to every spec.
constexpr FcPathFactory kPaths[] = {CreateInt8Path, CreateF16Path, CreateF32GemmPath,
                                    CreateXnnF32Path};

// Paths for one row (batch-1 decoding), tried in order after kPaths: the first that applies
// serves rows == 1; none applying leaves one row to the kPaths path. Not tried when the kPaths
// path holds its own copy of the weights: reading them in place as well would keep both
// resident.
constexpr FcPathFactory kOneRowPaths[] = {CreateF32GemvPath};

}  // namespace

Result<FullyConnected> FullyConnected::Create(const FcPart* parts, size_t num_parts,
                                              const FcParams& params, std::string name) {
  if (num_parts == 0) return InternalError(name + ": no weights");
  FcSpec spec;
  spec.parts = parts;
  spec.num_parts = num_parts;
  spec.in = parts[0].weight.cols;
  for (size_t i = 0; i < num_parts; ++i) {
    const FcPart& p = parts[i];
    if (p.bias.dtype != DType::kF32) return InternalError(name + ": bias is not F32");
    if (p.weight.cols != spec.in || p.bias.elements() != p.weight.rows) {
      return InternalError(name + ": fused parts disagree on shapes");
    }
    spec.out += p.weight.rows;
  }
  spec.in_stride = params.input_stride != 0 ? params.input_stride : spec.in;
  spec.out_stride = params.output_stride != 0 ? params.output_stride : spec.out;
  spec.params = &params;
  spec.name = &name;

  FullyConnected fc;
  for (FcPathFactory create : kPaths) {
    HW_ASSIGN_OR_RETURN(fc.path_, create(spec));
    if (fc.path_ != nullptr) break;
  }
  if (fc.path_ == nullptr) return InternalError(name + ": no kernel path applies");
  for (FcPathFactory create : kOneRowPaths) {
    if (fc.path_->HoldsWeightCopy()) break;
    HW_ASSIGN_OR_RETURN(fc.one_row_, create(spec));
    if (fc.one_row_ != nullptr) break;
  }
  fc.in_ = spec.in;
  fc.out_ = spec.out;
  fc.name_ = std::move(name);
  return fc;
}

FullyConnected::FullyConnected() = default;

bool FullyConnected::HoldsWeightCopy() const {
  return path_ != nullptr && path_->HoldsWeightCopy();
}
FullyConnected::FullyConnected(FullyConnected&& other) noexcept = default;
FullyConnected& FullyConnected::operator=(FullyConnected&& other) noexcept = default;
FullyConnected::~FullyConnected() = default;

Status FullyConnected::Run(size_t rows, const float* x, float* y, Workers workers) const {
  if (rows == 0) return Status::Ok();
  if (rows == 1 && one_row_ != nullptr) return one_row_->Run(rows, x, y, workers);
  if (path_ == nullptr) return InternalError(name_ + ": operator was not created");
  return path_->Run(rows, x, y, workers);
}

std::string FullyConnected::KernelName(size_t rows) const {
  if (rows == 1 && one_row_ != nullptr) return one_row_->KernelName(rows);
  if (path_ == nullptr) return "none";
  return path_->KernelName(rows);
}

}  // namespace headwise
