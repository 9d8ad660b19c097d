# Sanitizer and fuzzing builds (CMakePresets.json: asan-ubsan, tsan; fuzz/run.sh: build/fuzz).
#   HEADWISE_SANITIZE  a -fsanitize= list applied to every first-party target and the links,
#                      e.g. "address,undefined" or "thread" (gcc or clang). Any report aborts.
#   HEADWISE_FUZZ      builds the libFuzzer targets in fuzz/ (clang only). The whole build is
#                      instrumented for coverage (fuzzer-no-link) and, unless HEADWISE_SANITIZE
#                      says otherwise, with AddressSanitizer and UBSan.
# Debian's XNNPACK, pthreadpool, SentencePiece and protobuf are not instrumented: ASan and UBSan
# still check every access our code makes; TSan cannot see the synchronisation inside
# pthreadpool, so the TSan tests keep each Translator's pool at one thread (tests/concurrency).
# Left out of sanitizer builds: the allocation-counting tests (they replace the allocator the
# sanitizers own); the asan-ubsan test preset skips the packaging tests that ship or load the
# library elsewhere (a .deb, a consumer project, a JVM), which a sanitized build cannot pass.
set(HEADWISE_SANITIZE "" CACHE STRING "-fsanitize= list for every target (address,undefined | thread)")
option(HEADWISE_FUZZ "Build the libFuzzer targets in fuzz/ (clang)" OFF)

if(HEADWISE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HEADWISE_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(NOT HEADWISE_SANITIZE)
    set(HEADWISE_SANITIZE "address,undefined")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(HEADWISE_SANITIZE)
  add_compile_options(-fsanitize=${HEADWISE_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${HEADWISE_SANITIZE})
endif()
