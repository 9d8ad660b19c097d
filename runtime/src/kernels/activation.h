// runtime/src/kernels/activation.h: the feed-forward activations of MarianConfig.
// relu is normally fused into fc1 by XNNPACK's output clamp; the kernel exists for the
// unfused path and the tests.
#ifndef HEADWISE_RUNTIME_KERNELS_ACTIVATION_H_
#define HEADWISE_RUNTIME_KERNELS_ACTIVATION_H_

#include <cstddef>

namespace headwise::kernels {

void ReluInPlace(float* x, size_t n);
// x * sigmoid(x), computed as x / (1 + exp(-x)) like torch's SiLU.
void SwishInPlace(float* x, size_t n);
// Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))) (torch's default, HF "gelu").
void GeluInPlace(float* x, size_t n);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_ACTIVATION_H_
