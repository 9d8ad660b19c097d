// runtime/src/kernels/activation.h: the feed-forward activations of MarianConfig
// (format/model_types.h Activation) and the one dispatch from the model's activation to its
// kernel. relu is normally fused into fc1 by XNNPACK's output clamp (network.cc); its kernel
// exists for the unfused path and the tests. Adding an activation: its kernel and its case in
// ApplyActivation, both in activation.cc.
#ifndef HEADWISE_RUNTIME_KERNELS_ACTIVATION_H_
#define HEADWISE_RUNTIME_KERNELS_ACTIVATION_H_

#include <cstddef>

#include "format/model_types.h"

namespace headwise::kernels {

// x = activation(x) over n floats; an Activation outside the enum leaves x as it is.
void ApplyActivation(Activation a, float* x, size_t n);

void ReluInPlace(float* x, size_t n);
// x * sigmoid(x), computed as x / (1 + exp(-x)) like torch's SiLU.
void SwishInPlace(float* x, size_t n);
// Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))) (torch's default, HF "gelu").
void GeluInPlace(float* x, size_t n);

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_ACTIVATION_H_
