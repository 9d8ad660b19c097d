// runtime/src/parallel.h: runs our own loops (attention heads, the int8 and fp32 kernels' output
// tiles) on the Translator's pthreadpool, the pool XNNPACK's operators use, so the two never
// compete for cores; and decides which calls are worth waking its workers.
#ifndef HEADWISE_RUNTIME_PARALLEL_H_
#define HEADWISE_RUNTIME_PARALLEL_H_

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "team.h"

namespace headwise {

// When a parallel call is worth waking the pool's workers, in multiply-adds of an fp32 product
// (attention's work is weighted to that scale: AttentionWork below).
//
// Yielding workers (WorkerWait::kYield, the default) sleep after each call, and waking one
// costs tens of microseconds, far more when other processes hold the cores. Work under 2^20
// multiply-adds runs on the calling thread. Measured on the shipped model's size, batch 1, on
// a 2-core machine loaded by other processes (wall time, 2 threads vs 1): with 2^16 fp32 was
// 2.2-2.3x and int8 2.3-3.6x slower than one thread; with 2^20 1.2x and 1.3-1.6x (one row's
// fc1 / fc2 / attention projections are under it, lm_head and the encoder's products over it).
// An int8 multiply-add costs about an eighth of an fp32 one (op/fc/base fc1 at one row: fp32
// 142 us, int8 17 us), so int8 products count an eighth: with them counted at face value,
// 2 threads ran beam 4 on the shipped int8 models at 0.81-0.83x of 1 thread on two idle cores,
// and at 1.02x counted an eighth (bench/results/2026-12-04-threads-x86-2core.md).
//
// Spinning workers (WorkerWait::kSpin) wait for the next call on the core (pthreadpool spins
// a bounded number of iterations, then sleeps), so consecutive calls of a decode step find them
// awake: int8 products count at face value, which is what made the 512-wide int8 model 1.45-1.51x
// faster on 2 threads than on 1 there.
inline constexpr size_t kMinParallelWork = size_t{1} << 20;
inline constexpr size_t kInt8MacsPerUnitYielding = 8;

// Inside a team (team.h) a loop costs its tiles' claims and a wait for the last tile, about a
// microsecond, not a wake: work from 2^17 multiply-adds on (int8 at face value: about 3 us of a
// one-row int8 product, 8 us of an fp32 one) is split.
inline constexpr size_t kMinTeamWork = size_t{1} << 17;
// A team cuts a loop into about this many tiles per thread (multiples of the caller's tile), so
// that a helper that arrives late still finds some.
inline constexpr size_t kTeamTilesPerThread = 4;

// The kind of multiply-add a call's work counts.
enum class WorkKind { kFloat, kInt8 };

// The Translator's pool as a parallel call sees it: the pool (null: run on the calling thread)
// and how its workers wait after the call (TranslatorLimits::worker_wait), or, inside a call that
// runs as a team (team.h), the team, with no pool: the pool is busy holding the team, and
// XNNPACK's operators, which take `pool`, then run on the calling thread. Converts from a bare
// pthreadpool* (yielding workers) for code that has no Translator (tests, bench).
struct Workers {
  pthreadpool_t pool = nullptr;
  bool spin = false;
  Team* team = nullptr;

  Workers() = default;
  Workers(pthreadpool_t p, bool spin_workers = false) : pool(p), spin(spin_workers) {}  // NOLINT
  static Workers OfTeam(Team* t) {
    Workers w;
    w.team = t;
    return w;
  }

  uint32_t flags() const { return spin ? 0u : static_cast<uint32_t>(PTHREADPOOL_FLAG_YIELD_WORKERS); }

  // True when there is a pool or a team and `work` multiply-adds of `kind` are worth splitting.
  bool Split(size_t work, WorkKind kind = WorkKind::kFloat) const {
    if (team != nullptr) return team->size() > 1 && work >= kMinTeamWork;
    if (pool == nullptr) return false;
    if (kind == WorkKind::kInt8 && !spin) work /= kInt8MacsPerUnitYielding;
    return work >= kMinParallelWork;
  }
};

// Attention's work for the threshold: query-key pairs x (q.k and p.v multiply-adds per pair),
// weighted by what a multiply-add of attention costs against one of the matrix products. Its
// loops are short (head_dim 32-64, tens of keys) and every score goes through exp: in one run of
// bench/ on one x86 core (op/attention, op/fc and op/int8_families at the shipped size, batch 1)
// the decoder's attention reached 7 G multiply-adds/s against 20 for an fp32 and 55 for an int8
// one-row product, so counted at face value a decode step's attention at batch 32 (several
// hundred microseconds) stayed on one thread. The weight keeps batch-1 decoding's attention
// (tens of microseconds per call) on the calling thread.
inline constexpr size_t kAttentionCostPerMac = 4;
inline size_t AttentionWork(size_t query_key_pairs, size_t inner) {
  return query_key_pairs * 2 * inner * kAttentionCostPerMac;
}

// Calls fn(begin, count) over [0, range): once with (0, range) when the work (`work`
// multiply-adds of `kind`) is not worth splitting, else in tiles whose bounds are multiples of
// `tile` (the pool's tiles are `tile` long, a team's a multiple of it), concurrently. The
// kernels behind fn compute each output the same way whatever range they are given, so the
// results do not depend on the split. No allocation.
template <typename F>
void ParallelTiles(Workers workers, size_t range, size_t tile, size_t work, WorkKind kind,
                   F&& fn) {
  if (range <= tile || !workers.Split(work, kind)) {
    fn(size_t{0}, range);
    return;
  }
  using Fn = typename std::remove_reference<F>::type;
  void* context = const_cast<void*>(static_cast<const void*>(&fn));
  const auto call = [](void* c, size_t begin, size_t count) {
    (*static_cast<Fn*>(c))(begin, count);
  };
  if (workers.team != nullptr) {
    const size_t want = workers.team->size() * kTeamTilesPerThread;
    const size_t per = (range + want - 1) / want;
    const size_t team_tile = per <= tile ? tile : (per + tile - 1) / tile * tile;
    workers.team->For(call, context, range, team_tile);
    return;
  }
  pthreadpool_parallelize_1d_tile_1d(workers.pool, call, context, range, tile, workers.flags());
}

// Calls fn(i) for i in [0, n), spread over the workers when the work is worth splitting (`work`
// in fp32 multiply-adds, Workers::Split); otherwise the calling thread does it all: ParallelTiles
// over single indices. fn must be safe to run concurrently for different i. No allocation.
template <typename F>
void ParallelFor(Workers workers, size_t n, size_t work, F&& fn) {
  ParallelTiles(workers, n, 1, work, WorkKind::kFloat, [&](size_t begin, size_t count) {
    for (size_t i = begin; i < begin + count; ++i) fn(i);
  });
}

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_PARALLEL_H_
