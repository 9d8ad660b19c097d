// The AVX-512 fp32 gemm family's schedule (f32_gemm_avx512.h): blocks of channels, row tiles,
// segments of k, each a pack job whose pairs one buffer holds while the job's tiles copy the
// next job's rows into the other (f32_gemm_avx512_tile.h computes the tiles).
#include "kernels/f32_gemm_avx512.h"

#ifdef HEADWISE_F32_GEMM_AVX512

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu_x86.h"
#include "kernels/f32_gemm_avx2.h"
#include "kernels/f32_gemm_avx512_tile.h"

namespace headwise::kernels {
namespace {

using namespace f32_avx512;  // NOLINT: the tile's helpers, private to this family

constexpr size_t kMaxPairs = 6;     // 12 rows per tile
constexpr size_t kOneSegment = 64;  // chunks of 8 inputs: up to this many, k is one segment
constexpr size_t kSegChunks = 32;   // chunks per segment when k is split
constexpr size_t kSplitBlock = 48;  // channels per block when k has several segments
// The stack buffer: two pair buffers of kMaxPairs x seg x 16 floats and, when k is split (seg
// = kSegChunks), the partial sums of a block's tiles (kMaxPairs x kSplitBlock x 16 floats).
constexpr size_t kStackFloats =
    std::max(2 * kMaxPairs * kOneSegment * 16,
             2 * kMaxPairs * kSegChunks * 16 + kMaxPairs * kSplitBlock * 16);

// One pack job's rows: rows [r0, r0 + rows) of x (rows <= 2 * pairs), chunks [c0, c0 + cn), as
// [chunk][pair][16] in dst. Row slot i (pair i / 2, half i % 2) holds row r0 + i, or zeros past
// `rows`.
struct Pack {
  size_t r0 = 0, rows = 0, pairs = 0, c0 = 0, cn = 0;
  float* dst = nullptr;  // null: no job

  const float* Source(const F32GemmArgs& a, size_t slot) const {
    return slot < rows ? a.x + (r0 + slot) * a.x_stride + c0 * 8 : nullptr;
  }
  float* Dest(size_t slot) const { return dst + (slot / 2) * 16 + (slot % 2) * 8; }
  size_t Stride() const { return pairs * 16; }
};

// Row slots [first, 2 * pairs) of a job, copied before it runs (the ones its predecessor's tiles
// did not copy).
HEADWISE_TARGET_AVX512 void CopyRest(const F32GemmArgs& a, const Pack& p, size_t first) {
  for (size_t slot = first; slot < 2 * p.pairs; ++slot) {
    CopyRow(p.Source(a, slot), p.Dest(slot), p.Stride(), 0, p.cn);
  }
}

// One pack job, `cur` (packed) over channels [lo, hi) of the call's [.., end), with the partial
// sums of its tiles in `partial` (null when k is one segment). The job's last
// tiles copy row slots of `next` (when there is a next job, whose channels start at next_lo),
// one slot each; returns how many slots of `next`, from the first, they copied.
template <int P, int NR, bool F16>
HEADWISE_TARGET_AVX512 size_t Job(const F32GemmArgs& a, const Pack& cur, size_t lo, size_t hi,
                                  size_t end, bool first, bool last, float* partial,
                                  const Pack& next, size_t next_lo) {
  using W = std::conditional_t<F16, uint16_t, float>;
  const size_t tiles = (hi - lo + NR - 1) / NR;
  const size_t copied = next.dst != nullptr ? std::min(tiles, 2 * next.pairs) : 0;
  for (size_t t = 0; t < tiles; ++t) {
    RowCopy copy;
    if (t + copied >= tiles) {
      const size_t slot = t + copied - tiles;
      copy = {next.Source(a, slot), next.Dest(slot), next.Stride(), next.cn};
    }
    const size_t o = lo + t * NR;
    // The tile after this one: the next of this job, else the first of the next job; fetched
    // only in a first row tile (the others find the block in L2).
    Ahead ahead;
    const bool in_job = t + 1 < tiles;
    const size_t ao = in_job ? o + NR : next_lo;
    if ((in_job || next.dst != nullptr) && (in_job ? cur.r0 : next.r0) == 0 && ao < end) {
      ahead.w = static_cast<const W*>(a.w) + (in_job ? cur.c0 : next.c0) * 8;
      for (int j = 0; j < NR; ++j) ahead.row[j] = std::min(ao + static_cast<size_t>(j), end - 1);
    }
    Tile<P, NR, F16>(a, cur.r0, cur.rows, o, std::min<size_t>(NR, hi - o), cur.dst, cur.c0,
                     cur.cn, partial != nullptr ? partial + t * (P * NR * 16) : nullptr, first,
                     last, ahead, copy);
  }
  return copied;
}

template <bool F16>
HEADWISE_TARGET_AVX512 void Gemm(const F32GemmArgs& a, size_t begin, size_t end) {
  // Row tiles of at most 12 rows, as even as the count allows (an even number each but the last).
  const size_t max_rows = 2 * kMaxPairs;
  const size_t row_tiles = (a.rows + max_rows - 1) / max_rows;
  const size_t tile_rows = std::min(max_rows, ((a.rows + row_tiles - 1) / row_tiles + 1) / 2 * 2);
  // k is one segment up to 512 inputs (12 rows' pairs in 24 KB, in L1 beside the weights
  // streaming through), else segments of 256 inputs with the partial sums kept between them.
  const size_t chunks = a.k / 8;
  const size_t seg = chunks <= kOneSegment ? std::max<size_t>(chunks, 1) : kSegChunks;
  const size_t segments = (std::max<size_t>(chunks, 1) + seg - 1) / seg;
  size_t block = F32GemmBlockChannels(a.k, F16);
  if (segments > 1) block = std::min(block, kSplitBlock);
  alignas(64) float stack[kStackFloats];
  float* const buffers[2] = {stack, stack + kMaxPairs * seg * 16};
  float* const partial = segments > 1 ? stack + 2 * kMaxPairs * seg * 16 : nullptr;
  // The jobs in order: blocks, then row tiles, then segments; job j packs into buffers[j % 2].
  const size_t blocks = (end - begin + block - 1) / block;
  const size_t jobs = blocks * row_tiles * segments;
  const auto describe = [&](size_t j) {
    Pack p;
    if (j >= jobs) return p;
    const size_t s = j % segments, r = (j / segments) % row_tiles;
    p.r0 = r * tile_rows;
    p.rows = std::min(tile_rows, a.rows - p.r0);
    p.pairs = (p.rows + 1) / 2;
    p.c0 = s * seg;
    p.cn = std::min(seg, chunks - std::min(chunks, p.c0));
    p.dst = buffers[j % 2];
    return p;
  };
  const auto block_of = [&](size_t j) { return begin + (j / (segments * row_tiles)) * block; };
  Pack cur = describe(0);
  size_t ready = 0;  // row slots of cur already copied
  for (size_t j = 0; j < jobs; ++j) {
    CopyRest(a, cur, ready);
    const Pack next = describe(j + 1);
    const size_t s = j % segments, lo = block_of(j), hi = std::min(end, lo + block);
    const bool first = s == 0, last = s + 1 == segments;
    const size_t next_lo = block_of(j + 1);
    switch (cur.pairs) {
      case 6: ready = Job<6, 4, F16>(a, cur, lo, hi, end, first, last, partial, next, next_lo); break;
      case 5: ready = Job<5, 4, F16>(a, cur, lo, hi, end, first, last, partial, next, next_lo); break;
      case 4: ready = Job<4, 4, F16>(a, cur, lo, hi, end, first, last, partial, next, next_lo); break;
      case 3: ready = Job<3, 4, F16>(a, cur, lo, hi, end, first, last, partial, next, next_lo); break;
      case 2: ready = Job<2, 8, F16>(a, cur, lo, hi, end, first, last, partial, next, next_lo); break;
      default: ready = Job<1, 8, F16>(a, cur, lo, hi, end, first, last, partial, next, next_lo); break;
    }
    cur = next;
  }
}

}  // namespace

bool F32GemmAvx512Available() {
  const X86Features& f = CpuX86();
  return f.avx512f && F32GemmAvx2Available();
}

void F32GemmAvx512(const F32GemmArgs& a, size_t begin, size_t end) {
  if (a.rows == 0 || begin >= end) return;
  if (a.rows == 1) {
    F32GemmAvx2(a, begin, end);  // one row would fill half of every register
  } else if (a.f16) {
    Gemm<true>(a, begin, end);
  } else {
    Gemm<false>(a, begin, end);
  }
}

}  // namespace headwise::kernels

#endif  // HEADWISE_F32_GEMM_AVX512
