// The fp32 gemm reference loop and the table of families (f32_gemm.h). A family lives in its
// own file, f32_gemm_<family>.cc, and joins the table below with one line.
#include "kernels/f32_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "kernels/f32_gemm_avx2.h"
#include "kernels/f32_gemm_avx512.h"
#include "kernels/f32_gemm_kernel.h"

namespace headwise::kernels {
namespace {

bool Always() { return true; }

// Most preferred first; the first available entry is the one F32Gemm runs.
const F32GemmKernel kKernels[] = {
#ifdef HEADWISE_F32_GEMM_AVX512
    {"avx512", F32GemmAvx512Available, F32GemmAvx512},
#endif
#ifdef HEADWISE_F32_GEMM_AVX2
    {"avx2", F32GemmAvx2Available, F32GemmAvx2},
#endif
    {"portable", Always, F32GemmReference},
};

const F32GemmKernel& Choose() {
  const char* want = std::getenv("HEADWISE_F32_GEMM_KERNEL");
  if (want != nullptr && *want != '\0') {
    for (const F32GemmKernel& k : kKernels) {
      if (std::strcmp(k.name, want) == 0 && k.available()) return k;
    }
  }
  return *std::find_if(std::begin(kKernels), std::end(kKernels),
                       [](const F32GemmKernel& k) { return k.available(); });
}

struct Selection {
  const F32GemmKernel* kernel;
  const char* name;  // "f32-gemm-<family>"
};

const Selection& Selected() {
  static const Selection chosen = [] {
    const F32GemmKernel& k = Choose();
    if (std::strcmp(k.name, "avx512") == 0) return Selection{&k, "f32-gemm-avx512"};
    if (std::strcmp(k.name, "avx2") == 0) return Selection{&k, "f32-gemm-avx2"};
    return Selection{&k, "f32-gemm-portable"};
  }();
  return chosen;
}

}  // namespace

const F32GemmKernel* F32GemmKernels(size_t* count) {
  *count = std::size(kKernels);
  return kKernels;
}

void F32GemmReference(const F32GemmArgs& a, size_t begin, size_t end) {
  const size_t k8 = a.k / 8 * 8;
  for (size_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.x_stride;
    float* y = a.y + r * a.y_stride;
    for (size_t o = begin; o < end; ++o) {
      float l[8] = {};
      for (size_t i = 0; i < k8; i += 8) {
        for (size_t j = 0; j < 8; ++j) l[j] = std::fma(x[i + j], F32WeightAt(a, o, i + j), l[j]);
      }
      y[o] = F32Finish(a, o, F32TailSum(a, x, o, k8, F32ReduceLanes(l)));
    }
  }
}

void F32Gemm(const F32GemmArgs& a, size_t begin, size_t end) {
  Selected().kernel->gemm(a, begin, end);
}

bool HaveFastF32Gemm() {
  // Any family but the last entry, the portable loop.
  static const bool have = std::any_of(std::begin(kKernels), std::end(kKernels) - 1,
                                       [](const F32GemmKernel& k) { return k.available(); });
  return have;
}

const char* F32GemmKernelName() { return Selected().name; }

size_t F32GemmBlockChannels(size_t k, bool f16) {
  // About 192 KB of weights per block: in L2 beside the rows of x (L2 is 1-2 MB per core on
  // the x86 CPUs this runs on).
  constexpr size_t kBlockBytes = 192 * 1024;
  const size_t row_bytes = std::max<size_t>(1, k * (f16 ? 2 : 4));
  return std::max<size_t>(24, kBlockBytes / row_bytes / 24 * 24);
}

}  // namespace headwise::kernels
