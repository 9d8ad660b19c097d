#include "kernels/cpu_x86.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#include <cstdint>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace headwise::kernels {
namespace {

#if defined(__x86_64__) || defined(__i386__)
bool Bit(unsigned v, int bit) { return ((v >> bit) & 1u) != 0; }

uint64_t Xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Linux keeps AMX tile data off until a process asks (kernel 5.16+, arch/x86/include/uapi/asm/
// prctl.h: ARCH_REQ_XCOMP_PERM 0x1023, XFEATURE_XTILEDATA 18).
bool RequestTileData() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
  return false;
#endif
}

X86Features Detect() {
  X86Features f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = Bit(c, 27), avx = Bit(c, 28);
  const bool fma = Bit(c, 12), f16c = Bit(c, 29);  // leaf 1 ecx (c is reused for leaf 7.1)
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = Xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;          // SSE + AVX
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;        // + opmask, ZMM_Hi256, Hi16_ZMM
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA
  unsigned max7 = 0, b7 = 0, c7 = 0, d7 = 0, a71 = 0;
  if (!__get_cpuid_count(7, 0, &max7, &b7, &c7, &d7)) return f;
  if (max7 >= 1) __get_cpuid_count(7, 1, &a71, &b, &c, &d);
  f.avx2 = ymm_state && Bit(b7, 5);
  f.fma = ymm_state && fma;
  f.f16c = ymm_state && f16c;
  f.avx512f = zmm_state && Bit(b7, 16);
  f.avx_vnni = f.avx2 && Bit(a71, 4);
  f.avx512 = zmm_state && Bit(b7, 16) /*F*/ && Bit(b7, 30) /*BW*/ && Bit(b7, 31) /*VL*/;
  f.avx512_vnni = f.avx512 && Bit(c7, 11) /*VNNI*/;
  f.amx_int8 = f.avx512_vnni && tile_state && Bit(d7, 24) /*AMX-TILE*/ && Bit(d7, 25) /*AMX-INT8*/ &&
               RequestTileData();
  return f;
}
#else
X86Features Detect() { return {}; }
#endif

}  // namespace

const X86Features& CpuX86() {
  static const X86Features features = Detect();
  return features;
}

}  // namespace headwise::kernels
