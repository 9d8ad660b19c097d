// runtime/src/kernels/softmax.h: softmax for attention rows and the log-softmax normaliser of
// the vocabulary distribution.
#ifndef HEADWISE_RUNTIME_KERNELS_SOFTMAX_H_
#define HEADWISE_RUNTIME_KERNELS_SOFTMAX_H_

#include <cstddef>

namespace headwise::kernels {

// x[i] = exp(x[i] - max) / sum_j exp(x[j] - max) over n > 0 values, in place. Entries equal to
// -inf get probability 0 (at least one entry must be finite).
void SoftmaxInPlace(float* x, size_t n);

// log_softmax(x)[i] == (x[i] - max) - log_sum, the order torch computes it in.
struct LogSoftmaxNorm {
  float max;
  float log_sum;  // log(sum_i exp(x[i] - max))
};
// n > 0 values, at least one finite; -inf entries contribute nothing.
LogSoftmaxNorm LogSoftmaxNormalizer(const float* x, size_t n);

// The first i < n with x[i] == value, or n - 1 when there is none (n > 0): greedy's argmax
// (lowest id on ties) once the maximum is known.
size_t FirstIndexOf(const float* x, size_t n, float value);

// The first i in [from, n) with base + ((x[i] - max) - log_sum) > threshold, each operation
// rounded in float in that order (a beam candidate's score: its beam's score plus the token's
// log-probability), or n when there is none. NaN never qualifies. Beam search skips with it the
// candidates that cannot enter its list.
size_t FirstScoreAbove(const float* x, size_t from, size_t n, float base, float max,
                       float log_sum, float threshold);

// exp(x) for every element, in place; accurate to a few ulp over the float range; vectorises.
void ExpInPlace(float* x, size_t n);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_SOFTMAX_H_
