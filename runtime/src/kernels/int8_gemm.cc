// The int8 reference loops and the table of kernel families (int8_gemm.h). A family lives in
// its own file, int8_gemm_<family>.cc, and joins the table below with one line.
#include "kernels/int8_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "kernels/int8_gemm_amx.h"
#include "kernels/int8_gemm_avx2.h"
#include "kernels/int8_gemm_avx512vnni.h"
#include "kernels/int8_gemm_avxvnni.h"
#include "kernels/int8_gemm_kernel.h"
#include "kernels/int8_gemm_neon.h"
#include "kernels/int8_gemm_neon_armv7.h"
#include "kernels/int8_gemm_neon_dotprod.h"

namespace headwise::kernels {
namespace {

bool Always() { return true; }

#ifdef HEADWISE_INT8_AVX2
// The x86 VNNI and AMX families quantize with the AVX2 loop, so they need AVX2 as well (every
// CPU with those extensions has it; the check keeps the contract explicit).
bool Avx512VnniFamily() { return Int8Avx512VnniAvailable() && Int8Avx2Available(); }
bool AvxVnniFamily() { return Int8AvxVnniAvailable() && Int8Avx2Available(); }
bool AmxFamily() { return Int8AmxAvailable() && Int8Avx2Available(); }
#endif

// Most preferred first; the first available entry is the one Int8Gemm runs.
const Int8Kernel kKernels[] = {
#if defined(HEADWISE_INT8_AVX2) && defined(HEADWISE_INT8_AMX)
    {"amx", AmxFamily, Int8GemmAmx, QuantizeRowsAvx2},
#endif
#if defined(HEADWISE_INT8_AVX2) && defined(HEADWISE_INT8_AVX512VNNI)
    {"avx512-vnni", Avx512VnniFamily, Int8GemmAvx512Vnni, QuantizeRowsAvx2},
#endif
#if defined(HEADWISE_INT8_AVX2) && defined(HEADWISE_INT8_AVXVNNI)
    {"avx-vnni", AvxVnniFamily, Int8GemmAvxVnni, QuantizeRowsAvx2},
#endif
#ifdef HEADWISE_INT8_AVX2
    {"avx2", Int8Avx2Available, Int8GemmAvx2, QuantizeRowsAvx2},
#endif
#ifdef HEADWISE_INT8_NEON_DOTPROD
    {"neon-dotprod", Int8NeonDotprodAvailable, Int8GemmNeonDotprod, QuantizeRowsNeon},
#endif
#ifdef HEADWISE_INT8_NEON
    {"neon", Always, Int8GemmNeon, QuantizeRowsNeon},
#endif
#ifdef HEADWISE_INT8_NEON_ARMV7
    {"neon-armv7", Int8NeonArmv7Available, Int8GemmNeonArmv7, QuantizeRowsNeonArmv7},
#endif
    {"portable", Always, Int8GemmReference, QuantizeRowsReference},
};

// HEADWISE_INT8_KERNEL=<name> picks an available family below the CPU's first choice (to
// compare families end to end, or to rule a kernel out); a name that is not compiled in or
// that this CPU cannot run is ignored. Read once.
const Int8Kernel& Choose() {
  const char* want = std::getenv("HEADWISE_INT8_KERNEL");
  if (want != nullptr && *want != '\0') {
    for (const Int8Kernel& k : kKernels) {
      if (std::strcmp(k.name, want) == 0 && k.available()) return k;
    }
  }
  return *std::find_if(std::begin(kKernels), std::end(kKernels),
                       [](const Int8Kernel& k) { return k.available(); });
}

const Int8Kernel& Selected() {
  static const Int8Kernel& chosen = Choose();
  return chosen;
}

}  // namespace

const Int8Kernel* Int8Kernels(size_t* count) {
  *count = std::size(kKernels);
  return kKernels;
}

const char* Int8GemmKernelName() { return Selected().name; }

void Int8Gemm(const Int8GemmArgs& a, size_t begin, size_t end) { Selected().gemm(a, begin, end); }

void QuantizeRowsDynamic(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                         float* scale) {
  Selected().quantize(x, rows, cols, x_stride, q, scale);
}

void QuantizeRowsReference(const float* x, size_t rows, size_t cols, size_t x_stride, int8_t* q,
                           float* scale) {
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x + r * x_stride;
    float max_abs = 0.0f;
    for (size_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
    int8_t* out = q + r * cols;
    if (!(max_abs > 0.0f)) {
      scale[r] = 0.0f;
      std::fill(out, out + cols, int8_t{0});
      continue;
    }
    scale[r] = max_abs / 127.0f;
    const float inv = 127.0f / max_abs;
    for (size_t c = 0; c < cols; ++c) {
      // |row[c] * inv| <= 127 (+ rounding slack), so the conversion cannot overflow.
      out[c] = static_cast<int8_t>(std::lrintf(std::min(127.0f, std::max(-127.0f, row[c] * inv))));
    }
  }
}

void Int8GemmReference(const Int8GemmArgs& a, size_t begin, size_t end) {
  for (size_t o = begin; o < end; ++o) {
    const int8_t* w = a.w + o * a.k;
    for (size_t r = 0; r < a.rows; ++r) {
      a.y[r * a.y_stride + o] = Int8Finish(a, r, o, Int8DotTail(a.xq + r * a.k, w, 0, a.k));
    }
  }
}

}  // namespace headwise::kernels
