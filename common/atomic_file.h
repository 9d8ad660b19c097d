// common/atomic_file.h: writes a file so that readers see either the old file or the whole
// new one: data goes to "<path>.tmp.<pid>" in the same directory, is fsync'ed, then renamed.
// On any failure the temporary file is removed and `path` is untouched.
#ifndef HEADWISE_COMMON_ATOMIC_FILE_H_
#define HEADWISE_COMMON_ATOMIC_FILE_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "headwise/status.hpp"

namespace headwise {

struct AtomicWriteOptions {
  // When false, an existing `path` is an error (kIoError "exists; pass --force").
  bool overwrite = false;
};

// Writes the concatenation of `pieces` (pointer, size) to `path` atomically.
Status WriteFileAtomically(const std::string& path,
                           const std::vector<std::pair<const void*, size_t>>& pieces,
                           const AtomicWriteOptions& options = {});

}  // namespace headwise

#endif  // HEADWISE_COMMON_ATOMIC_FILE_H_
