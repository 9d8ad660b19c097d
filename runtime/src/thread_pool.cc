#include "thread_pool.h"

#include <pthreadpool.h>

#include <string>
#include <utility>

namespace headwise {

Result<ThreadPool> ThreadPool::Create(int num_threads) {
  if (num_threads < 1) {
    return InvalidArgument("num_threads must be >= 1, found " + std::to_string(num_threads));
  }
  ThreadPool pool;
  pool.threads_ = num_threads;
  if (num_threads > 1) {
    pool.pool_ = pthreadpool_create(static_cast<size_t>(num_threads));
    if (pool.pool_ == nullptr) {
      return BackendError("pthreadpool_create(" + std::to_string(num_threads) + ") failed");
    }
  }
  return pool;
}

ThreadPool::ThreadPool(ThreadPool&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), threads_(other.threads_) {}

ThreadPool& ThreadPool::operator=(ThreadPool&& other) noexcept {
  if (this != &other) {
    if (pool_ != nullptr) pthreadpool_destroy(pool_);
    pool_ = std::exchange(other.pool_, nullptr);
    threads_ = other.threads_;
  }
  return *this;
}

ThreadPool::~ThreadPool() {
  if (pool_ != nullptr) pthreadpool_destroy(pool_);
}

}  // namespace headwise
