// runtime/src/kernels/cpu_x86.h: which x86 vector extensions this CPU has and the operating
// system has enabled, read once per process from CPUID and XGETBV (Debian's cpuinfo predates
// AVX-VNNI and AMX, and clang 14's __builtin_cpu_supports knows neither). Kernels compiled with
// __attribute__((target(...))) for an extension may run only after its flag here is true.
// Thread-safe (a function-local static); every flag is false on other architectures.
#ifndef HEADWISE_RUNTIME_KERNELS_CPU_X86_H_
#define HEADWISE_RUNTIME_KERNELS_CPU_X86_H_

namespace headwise::kernels {

struct X86Features {
  bool avx2 = false;         // AVX2 with the OS saving ymm state
  bool fma = false;          // FMA (the VEX-encoded fused multiply-adds), with the ymm state
  bool f16c = false;         // F16C (vcvtph2ps / vcvtps2ph), with the ymm state
  bool avx512f = false;      // AVX-512 F with the OS saving zmm state
  bool avx512 = false;       // AVX-512 F, BW and VL with the OS saving zmm state
  bool avx512_vnni = false;  // avx512 and AVX-512 VNNI
  bool avx_vnni = false;     // AVX-VNNI (the VEX-encoded vpdpbusd on ymm), with AVX2
  // AMX-TILE and AMX-INT8, the OS saving tile state, and this process granted the tile data
  // permission (Linux arch_prctl(ARCH_REQ_XCOMP_PERM), requested on the first call; refused
  // in a sandbox that filters the call, and then false). Requires avx512_vnni as well, which
  // the AMX kernel uses around the tiles.
  bool amx_int8 = false;
};

const X86Features& CpuX86();

}  // namespace headwise::kernels

#endif  // HEADWISE_RUNTIME_KERNELS_CPU_X86_H_
