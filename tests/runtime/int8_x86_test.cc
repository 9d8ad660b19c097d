// The x86 int8 kernel families (AVX-512 VNNI, AVX-VNNI, AMX, and the packed-layout kernels of
// AVX-512 VNNI and AVX2) against the reference loop: every
// family this CPU can run must give Int8GemmReference's output bit for bit (the same int32 sums,
// the same finish), on every row count 1..40 (single rows, beams, remainders of every tile
// height), inputs that are and are not multiples of the vector and tile widths, channel ranges
// split where a thread split would put them, +-127 extremes and all-zero rows. A family this
// CPU lacks is skipped, naming the missing extension.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu_x86.h"
#include "kernels/int8_gemm.h"
#include "kernels/int8_gemm_amx.h"
#include "kernels/int8_gemm_avx2_packed.h"
#include "kernels/int8_gemm_avx512vnni.h"
#include "kernels/int8_gemm_avx512vnni_packed.h"
#include "kernels/int8_gemm_avxvnni.h"
#include "kernels/int8_packed.h"

namespace headwise::kernels {
namespace {

#if defined(__x86_64__) || defined(__i386__)

struct Family {
  const char* name;
  bool (*available)();
  void (*gemm)(const Int8GemmArgs&, size_t, size_t);
  const char* needs;
};

// A packed-layout kernel (the int8 operators run it on the Model's packed copies, not
// Int8Gemm's dispatch) behind the families' signature: the first `end` channels of a.w packed
// per call, then the packed product.
template <Int8PackedGemmFn kGemm>
void PackedGemm(const Int8GemmArgs& a, size_t begin, size_t end) {
  std::vector<uint8_t> packed(Int8VnniPackedBytes(end, a.k));
  PackInt8Vnni(a.w, end, a.k, packed.data());
  kGemm(a, packed.data(), begin, end);
}

const Family kFamilies[] = {
    {"avx512_vnni", Int8Avx512VnniAvailable, Int8GemmAvx512Vnni,
     "AVX-512 F/BW/VL/VNNI with zmm state enabled by the OS"},
    {"avx512_vnni_packed", Int8Avx512VnniPackedAvailable, PackedGemm<Int8GemmAvx512VnniPacked>,
     "AVX-512 F/BW/VL/VNNI with zmm state enabled by the OS"},
    {"avx2_packed", Int8Avx2PackedAvailable, PackedGemm<Int8GemmAvx2Packed>, "AVX2"},
    {"avx_vnni", Int8AvxVnniAvailable, Int8GemmAvxVnni, "AVX-VNNI and AVX2"},
    {"amx", Int8AmxAvailable, Int8GemmAmx,
     "AMX-TILE/AMX-INT8, tile state enabled and granted by the OS (arch_prctl), and AVX-512 VNNI"},
};

// A product's operands, filled per pattern.
struct Problem {
  size_t rows, k, out, x_stride_pad = 0, y_pad = 3;
  std::vector<int8_t> xq, w;
  std::vector<float> x_scale, w_scale, bias;
  float out_min = -1e30f, out_max = 1e30f;

  Problem(size_t n, size_t kk, size_t o, uint32_t seed, int pattern) : rows(n), k(kk), out(o) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-127, 127);
    std::uniform_real_distribution<float> u(0.001f, 0.05f), b(-1.0f, 1.0f);
    xq.resize(rows * k);
    w.resize(out * k);
    for (int8_t& v : xq) v = static_cast<int8_t>(byte(rng));
    for (int8_t& v : w) v = static_cast<int8_t>(byte(rng));
    x_scale.resize(rows);
    w_scale.resize(out);
    bias.resize(out);
    for (float& v : x_scale) v = u(rng);
    for (float& v : w_scale) v = u(rng);
    for (float& v : bias) v = b(rng);
    if (pattern == 1) {
      // Extremes: the largest sums of either sign (k * 127 * 127), against +-127 weights.
      for (size_t i = 0; i < xq.size(); ++i) xq[i] = (i / k) % 2 == 0 ? 127 : -127;
      for (size_t i = 0; i < w.size(); ++i) w[i] = (i / k) % 3 == 0 ? -127 : 127;
    } else if (pattern == 2) {
      // All-zero rows (scale 0, as QuantizeRowsDynamic gives them) between random ones, and a
      // clamp as ReLU products have.
      for (size_t r = 0; r < rows; r += 3) {
        std::fill(xq.begin() + r * k, xq.begin() + (r + 1) * k, int8_t{0});
        x_scale[r] = 0.0f;
      }
      out_min = 0.0f;
      out_max = 0.5f;
    }
  }

  Int8GemmArgs Args(float* y) const {
    Int8GemmArgs a;
    a.xq = xq.data();
    a.x_scale = x_scale.data();
    a.rows = rows;
    a.k = k;
    a.w = w.data();
    a.w_scale = w_scale.data();
    a.bias = bias.data();
    a.y = y;
    a.y_stride = out + y_pad;
    a.out_min = out_min;
    a.out_max = out_max;
    return a;
  }
};

// Runs `f` over [0, out) split at `split` (as two threads would) and the reference over the
// whole range; the outputs must have the same bits, and nothing past each row's out channels
// may be written.
void ExpectSameAsReference(const Family& f, const Problem& p, size_t split) {
  const size_t stride = p.out + p.y_pad;
  std::vector<float> got(p.rows * stride, -7.0f), want(p.rows * stride, -7.0f);
  const Int8GemmArgs a = p.Args(got.data());
  f.gemm(a, 0, split);
  f.gemm(a, split, p.out);
  Int8GemmReference(p.Args(want.data()), 0, p.out);
  for (size_t r = 0; r < p.rows; ++r) {
    for (size_t o = 0; o < stride; ++o) {
      const float g = got[r * stride + o], e = want[r * stride + o];
      if (std::memcmp(&g, &e, sizeof g) != 0) {
        FAIL() << f.name << ": rows " << p.rows << " k " << p.k << " out " << p.out << " split "
               << split << ": y[" << r << ", " << o << "] = " << g << ", reference " << e;
      }
    }
  }
}

class Int8X86Test : public ::testing::TestWithParam<Family> {
 protected:
  void SetUp() override {
    if (!GetParam().available()) {
      GTEST_SKIP() << GetParam().name << " not run: this CPU (or OS) lacks " << GetParam().needs;
    }
  }
};

TEST_P(Int8X86Test, EveryRowCountMatchesReference) {
  // k: below one vector, odd, a multiple of 64, not, over the AMX limit; out: below and above
  // a tile of 4 and of 16 channels.
  const size_t ks[] = {1, 7, 64, 100, 256, 300};
  const size_t outs[] = {3, 16, 37};
  uint32_t seed = 1;
  for (size_t rows = 1; rows <= 40; ++rows) {
    for (size_t k : ks) {
      for (size_t out : outs) {
        const Problem p(rows, k, out, seed++, 0);
        ExpectSameAsReference(GetParam(), p, out / 2 + 1);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(Int8X86Test, WideInputsAndManyChannelsMatchReference) {
  const struct { size_t rows, k, out; } cases[] = {
      {1, 2048, 64}, {4, 1024, 100}, {16, 2048, 48}, {32, 512, 130}, {33, 2049, 40}, {128, 256, 96},
      {20, 4100, 20}, {70, 160, 33},
      // More rows than one chunk of held corrections (256 in the AVX-512 VNNI family): the
      // chunk loop and its remainder rows.
      {257, 64, 17}, {300, 96, 40}, {515, 33, 35},
      // One and two rows over several tiles of 64 channels, the last one partial.
      {1, 256, 300}, {2, 100, 200}, {1, 33, 129}};
  uint32_t seed = 100;
  for (const auto& c : cases) {
    const Problem p(c.rows, c.k, c.out, seed++, 0);
    ExpectSameAsReference(GetParam(), p, std::min<size_t>(32, c.out));
    ExpectSameAsReference(GetParam(), p, c.out);
    ExpectSameAsReference(GetParam(), p, std::min<size_t>(7, c.out));  // inside a 16-channel block
    if (HasFatalFailure()) return;
  }
}

TEST_P(Int8X86Test, ExtremeValuesAndZeroRowsMatchReference) {
  for (int pattern : {1, 2}) {
    for (size_t rows : {1u, 3u, 16u, 17u, 40u}) {
      for (size_t k : {33u, 64u, 1000u, 2048u}) {
        const Problem p(rows, k, 21, 7 + rows, pattern);
        ExpectSameAsReference(GetParam(), p, 5);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(Int8X86Test, EmptyRangesWriteNothing) {
  const Problem p(5, 64, 8, 3, 0);
  std::vector<float> y(5 * 11, -7.0f);
  GetParam().gemm(p.Args(y.data()), 4, 4);
  for (float v : y) EXPECT_EQ(v, -7.0f);
}

INSTANTIATE_TEST_SUITE_P(Families, Int8X86Test, ::testing::ValuesIn(kFamilies),
                         [](const ::testing::TestParamInfo<Family>& param_info) { return std::string(param_info.param.name); });

TEST(Int8VnniPacked, LayoutHoldsFourInputsOfSixteenChannelsPerVectorTileByTile) {
  // 82 channels (two tiles of 4 blocks, the second with 18 real channels and 46 of padding),
  // k = 6 (two groups, the second half padding): channel o's group g at
  // (o / 64) * 2 * 256 + g * 256 + (o % 64) * 4, byte b = w[o, 4 g + b] + 128.
  const size_t n = 82, k = 6;
  std::vector<int8_t> w(n * k);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i % 255) - 127);
  ASSERT_EQ(Int8VnniPackedBytes(n, k), 2u * 2u * 256u);
  std::vector<uint8_t> p(Int8VnniPackedBytes(n, k), 0);
  PackInt8Vnni(w.data(), n, k, p.data());
  for (size_t o = 0; o < 128; ++o) {
    for (size_t g = 0; g < 2; ++g) {
      ASSERT_EQ(Int8VnniPackedOffset(o, g, 2), (o / 64) * 512 + g * 256 + (o % 64) * 4);
      for (size_t b = 0; b < 4; ++b) {
        const size_t i = 4 * g + b;
        const int want = o < n && i < k ? w[o * k + i] + 128 : 128;
        EXPECT_EQ(p[(o / 64) * 512 + g * 256 + (o % 64) * 4 + b], want) << o << ", " << i;
      }
    }
  }
}

TEST(Int8VnniPacked, GatheredRowsArePackedAsThoughGatheredFirst) {
  // k = 37 (a partial last group), 150 source channels (a padded third tile), 80 ids in an
  // order of their own with repeats (two tiles, the second with 16 real channels).
  const size_t n = 150, k = 37;
  std::vector<int8_t> w(n * k);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(-127, 127);
  for (int8_t& v : w) v = static_cast<int8_t>(byte(rng));
  std::vector<uint8_t> packed(Int8VnniPackedBytes(n, k));
  PackInt8Vnni(w.data(), n, k, packed.data());
  std::vector<int32_t> ids = {149, 0, 1, 15, 16, 17, 31, 32, 3, 3, 63, 64, 127, 128, 29, 30, 2, 33, 43, 12};
  while (ids.size() < 80) ids.push_back(static_cast<int32_t>((ids.size() * 37 + 11) % n));
  std::vector<int8_t> rows(ids.size() * k);
  for (size_t j = 0; j < ids.size(); ++j) {
    std::copy_n(w.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(ids[j]) * k), k,
                rows.begin() + static_cast<ptrdiff_t>(j * k));
  }
  std::vector<uint8_t> want(Int8VnniPackedBytes(ids.size(), k)), got(want.size(), 0x55);
  PackInt8Vnni(rows.data(), ids.size(), k, want.data());
  GatherInt8VnniPacked(packed.data(), k, ids.data(), ids.size(), got.data());
  EXPECT_EQ(got, want);
}

TEST(Int8Packed, TheDispatchedFamilysPackedKernelIsTheOneThatRuns) {
  // avx512-vnni and avx2 read the packed layout; amx (row-major tiles), avx-vnni and portable
  // do not pack.
  const std::string family = Int8GemmKernelName();
  const Int8PackedKernel& k = Int8PackedKernelHere();
  if (family == "avx512-vnni" || family == "avx2") {
    ASSERT_NE(k.gemm, nullptr) << family;
    EXPECT_EQ(std::string(k.name), family + "-packed");
  } else {
    EXPECT_EQ(k.gemm, nullptr) << family;
    EXPECT_EQ(k.name, nullptr) << family;
  }
}

TEST(CpuX86, ExtensionsImplyTheirPrerequisites) {
  const X86Features& f = CpuX86();
  EXPECT_TRUE(!f.avx_vnni || f.avx2);
  EXPECT_TRUE(!f.amx_int8 || f.avx512_vnni);
  // The same answer on every call (read once).
  EXPECT_EQ(&f, &CpuX86());
}

#endif

}  // namespace
}  // namespace headwise::kernels
