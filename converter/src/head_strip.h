// converter/src/head_strip.h: removes closed attention heads from projection weights.
//
// In a block with H source heads of size hd (d = d_model): q/k/v_proj.weight is [H*hd, d] and
// its bias [H*hd]; head h owns rows [h*hd, (h+1)*hd). out_proj.weight is [d, H*hd]; head h owns
// columns [h*hd, (h+1)*hd). Keeping heads `kept` (ascending indices) keeps those rows/columns
// in that order. Inputs are row-major; the caller has checked the shapes.
// Continuous gates: TestTimeGate gives each head's gate, ScaleHeadColumns folds the kept heads'
// gates into out_proj.weight (head h's output times g, then W_O = head h's output times W_O's
// columns times g).
#ifndef HEADWISE_CONVERTER_HEAD_STRIP_H_
#define HEADWISE_CONVERTER_HEAD_STRIP_H_

#include <cstdint>
#include <vector>

#include "format/model_types.h"

namespace headwise::convert {

// Rows of a [H*hd, row_width] matrix (row_width 1 for a bias) -> [kept*hd, row_width].
std::vector<float> KeepHeadRows(const std::vector<float>& m, uint32_t row_width, uint32_t head_dim,
                                const std::vector<uint32_t>& kept);

// Columns of a [rows, H*hd] matrix -> [rows, kept*hd].
std::vector<float> KeepHeadColumns(const std::vector<float>& m, uint32_t rows, uint32_t head_dim,
                                   const std::vector<uint32_t>& kept);

// The test-time gate of one head (format/model_types.h GateRule): hard 1 or 0 (log_alpha > 0);
// continuous clamp(sigmoid(log_alpha) * 1.2 - 0.1, 0, 1), computed in float as the trainer's
// float32 tensors do. A head is kept when its gate is above 0.
float TestTimeGate(GateRule rule, float log_alpha);

// Multiplies the columns of head j (of a [rows, heads.size()*hd] matrix, in place) by
// scales[j]: folds continuous gates into out_proj.weight.
void ScaleHeadColumns(std::vector<float>* m, uint32_t rows, uint32_t head_dim,
                      const std::vector<float>& scales);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_HEAD_STRIP_H_
