// runtime/src/kernels/vec.h: the few vector primitives the kernels share, written with GCC/Clang
// vector extensions so they compile to SIMD on every target (SSE/AVX on x86, NEON on Arm)
// without intrinsics. Float reductions do not auto-vectorise without -ffast-math (it would let
// the compiler reorder sums everywhere); these do it explicitly, in one fixed order, so results
// are deterministic for a given n.
#ifndef HEADWISE_RUNTIME_KERNELS_VEC_H_
#define HEADWISE_RUNTIME_KERNELS_VEC_H_

#include <cstddef>
#include <cstring>

namespace headwise::kernels {

// 128-bit vectors: the SIMD width every target has (SSE2 is the x86-64 baseline, NEON on
// Arm), so no ABI changes with the compile flags. Wider SIMD is XNNPACK's job (it dispatches on
// the CPU at run time); these loops are the small part of the work.
typedef float V4 __attribute__((vector_size(16)));

inline V4 LoadV4(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void StoreV4(float* p, V4 v) { std::memcpy(p, &v, sizeof v); }
inline float SumV4(V4 v) { return (v[0] + v[2]) + (v[1] + v[3]); }

// sum_i a[i] * b[i]
inline float Dot(const float* a, const float* b, size_t n) {
  V4 acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 += LoadV4(a + i) * LoadV4(b + i);
    acc1 += LoadV4(a + i + 4) * LoadV4(b + i + 4);
    acc2 += LoadV4(a + i + 8) * LoadV4(b + i + 8);
    acc3 += LoadV4(a + i + 12) * LoadV4(b + i + 12);
  }
  for (; i + 4 <= n; i += 4) acc0 += LoadV4(a + i) * LoadV4(b + i);
  float s = SumV4((acc0 + acc1) + (acc2 + acc3));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// sum_i a[i]
inline float Sum(const float* a, size_t n) {
  V4 acc0 = {}, acc1 = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    acc0 += LoadV4(a + i);
    acc1 += LoadV4(a + i + 4);
  }
  for (; i + 4 <= n; i += 4) acc0 += LoadV4(a + i);
  float s = SumV4(acc0 + acc1);
  for (; i < n; ++i) s += a[i];
  return s;
}

// y[i] += a * x[i]  (GCC -O2 leaves the plain loop scalar: it would need an alias check)
inline void Axpy(float a, const float* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) StoreV4(y + i, LoadV4(y + i) + LoadV4(x + i) * a);
  for (; i < n; ++i) y[i] += a * x[i];
}

// y[i] += x[i]
inline void AddInPlace(const float* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) StoreV4(y + i, LoadV4(y + i) + LoadV4(x + i));
  for (; i < n; ++i) y[i] += x[i];
}

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_VEC_H_
