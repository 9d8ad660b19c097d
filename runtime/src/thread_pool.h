// runtime/src/thread_pool.h: the pthreadpool of one Translator, shared by its XNNPACK
// operators and our own parallel loops (parallel.h).
//
// Ownership: ThreadPool owns its pthreadpool; with one thread it holds none (get() == nullptr,
// work runs on the calling thread). Move-only.
#ifndef HEADWISE_RUNTIME_THREAD_POOL_H_
#define HEADWISE_RUNTIME_THREAD_POOL_H_

#include "headwise/status.hpp"

struct pthreadpool;

namespace headwise {

class ThreadPool {
 public:
  // Errors: kInvalidArgument for num_threads < 1, kBackend when pthreadpool cannot start.
  static Result<ThreadPool> Create(int num_threads);
  ThreadPool() = default;
  ThreadPool(ThreadPool&& other) noexcept;
  ThreadPool& operator=(ThreadPool&& other) noexcept;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  pthreadpool* get() const { return pool_; }
  int num_threads() const { return threads_; }

 private:
  pthreadpool* pool_ = nullptr;
  int threads_ = 1;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_THREAD_POOL_H_
