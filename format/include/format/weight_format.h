// format/weight_format.h: what a weight format (format/model_types.h WeightFormat) does to
// the model IR, and the int8 encoding the writer and the tests share.
#ifndef HEADWISE_FORMAT_WEIGHT_FORMAT_H_
#define HEADWISE_FORMAT_WEIGHT_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/model_ir.h"
#include "format/model_types.h"

namespace headwise {

// Sets each tensor's dtype for `format`: the weight matrices (every 2-D tensor but
// final_logits_bias) MatrixDType(format), everything else F32.
void ApplyWeightFormat(WeightFormat format, ModelSpec* spec);

// The kI8 encoding of a [rows, cols] matrix (DType::kI8): writes the rows * cols quantized
// values to `q` and returns the row scales (value = q * scale[row]).
std::vector<float> QuantizeRowsI8(const float* data, size_t rows, size_t cols,
                                  std::vector<int8_t>* q);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_WEIGHT_FORMAT_H_
