// runtime/src/parallel.h: runs our own loops (attention heads) on the Translator's pthreadpool,
// the pool XNNPACK's operators use, so the two never compete for cores.
#ifndef HEADWISE_RUNTIME_PARALLEL_H_
#define HEADWISE_RUNTIME_PARALLEL_H_

#include <pthreadpool.h>

#include <cstddef>
#include <type_traits>

namespace headwise {

// Calls fn(i) for i in [0, n), spread over `pool` when one is given and the work is worth
// waking it (`work` in multiply-adds, below kMinParallelWork the calling thread does it all).
// fn must be safe to run concurrently for different i. No allocation.
inline constexpr size_t kMinParallelWork = size_t{1} << 20;  // why: xnn_ops.cc

template <typename F>
void ParallelFor(pthreadpool_t pool, size_t n, size_t work, F&& fn) {
  if (pool == nullptr || n < 2 || work < kMinParallelWork) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  using Fn = typename std::remove_reference<F>::type;
  pthreadpool_parallelize_1d(
      pool, [](void* context, size_t i) { (*static_cast<Fn*>(context))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)), n, PTHREADPOOL_FLAG_YIELD_WORKERS);
}

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_PARALLEL_H_
