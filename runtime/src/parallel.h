// runtime/src/parallel.h: runs our own loops (attention heads) on the Translator's pthreadpool,
// the pool XNNPACK's operators use, so the two never compete for cores.
#ifndef HEADWISE_RUNTIME_PARALLEL_H_
#define HEADWISE_RUNTIME_PARALLEL_H_

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace headwise {

// Work under 2^20 multiply-adds runs on the calling thread. Measured on the shipped model's
// size, batch 1, on a 2-core machine loaded by other processes (wall time, 2 threads vs 1):
// with 2^16 fp32 was 2.2-2.3x and int8 2.3-3.6x slower than one thread; with 2^20 1.2x and
// 1.3-1.6x (one row's fc1 / fc2 / attention projections are under it, lm_head and the
// encoder's products over it).
inline constexpr size_t kMinParallelWork = size_t{1} << 20;

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

// Workers go back to the scheduler after each parallel call instead of spinning for the next
// one: on a machine whose cores are busy with other processes a spinning worker takes the core
// from the thread that would give it work.
inline constexpr uint32_t kPoolFlags = PTHREADPOOL_FLAG_YIELD_WORKERS;

// Calls fn(i) for i in [0, n), spread over `pool` when one is given and the work is worth
// waking it (`work` in multiply-adds, below kMinParallelWork the calling thread does it all).
// fn must be safe to run concurrently for different i. No allocation.

template <typename F>
void ParallelFor(pthreadpool_t pool, size_t n, size_t work, F&& fn) {
  if (pool == nullptr || n < 2 || work < kMinParallelWork) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  using Fn = typename std::remove_reference<F>::type;
  pthreadpool_parallelize_1d(
      pool, [](void* context, size_t i) { (*static_cast<Fn*>(context))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)), n, kPoolFlags);
}

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_PARALLEL_H_
