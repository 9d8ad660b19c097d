// runtime/src/kernels/x86_intrinsics.h: <immintrin.h> for the x86 kernel families. GCC 12.2
// warns (-Wuninitialized, -Wmaybe-uninitialized) inside its own AVX-512 intrinsics wherever
// they are inlined (their _mm512_undefined_* results are self-initialised; GCC bug 105593,
// fixed in 12.3); the warnings are switched off for the header's lines only, so -Werror builds
// pass and warnings in headwise's own code still show.
#ifndef HEADWISE_RUNTIME_KERNELS_X86_INTRINSICS_H_
#define HEADWISE_RUNTIME_KERNELS_X86_INTRINSICS_H_

#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

#endif  // HEADWISE_RUNTIME_KERNELS_X86_INTRINSICS_H_
