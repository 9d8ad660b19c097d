// fuzz/fuzz_check.h: how a fuzz target reports a broken invariant. A clean error Status is a
// correct answer to hostile input; a crash, a sanitizer report or a FUZZ_CHECK failure is a
// finding. FUZZ_CHECK prints the condition and aborts, which libFuzzer (and the replay driver,
// by its exit status) records as a crash.
#ifndef HEADWISE_FUZZ_FUZZ_CHECK_H_
#define HEADWISE_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, ...)                                                   \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                        \
      std::fprintf(stderr, "\n");                                               \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

#endif  // HEADWISE_FUZZ_FUZZ_CHECK_H_
