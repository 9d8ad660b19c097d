// tests/support/alloc_counter.h: the allocation counter of the tests that prove a path
// allocates nothing (tests/runtime/alloc_test.cc, tests/api/c_api_alloc_test.cc).
//
// Linking the `headwise_alloc_counter` object library into a test binary replaces malloc,
// calloc, realloc, posix_memalign, aligned_alloc, memalign, free and every operator new /
// delete of that binary with wrappers over glibc's __libc_* entry points, so it sees what
// headwise and every library under it (XNNPACK, the thread pool's workers) allocate, on any
// thread. Not for sanitizer builds: AddressSanitizer and ThreadSanitizer own the allocator.
#ifndef HEADWISE_TESTS_SUPPORT_ALLOC_COUNTER_H_
#define HEADWISE_TESTS_SUPPORT_ALLOC_COUNTER_H_

namespace headwise::testing {

// Counts every allocation call (malloc family and operator new, on any thread) made while it
// lives. One at a time.
class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  long count() const;
};

// While true, operator new (throwing and nothrow forms) fails as if memory were exhausted; the
// malloc family is unaffected.
void SetNewFails(bool fail);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_SUPPORT_ALLOC_COUNTER_H_
