// common/atomic_file.h: writes a file so that readers see either the old file or the whole
// new one: data goes to a temporary "<path>.tmp.<pid>.<n>" in the same directory (created
// exclusively, so two writers never share one), is fsync'ed, then moved into place with
// PublishFile and the directory is fsync'ed. On any failure the temporary file is removed and
// `path` is untouched.
#ifndef HEADWISE_COMMON_ATOMIC_FILE_H_
#define HEADWISE_COMMON_ATOMIC_FILE_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "headwise/status.hpp"

namespace headwise {

struct AtomicWriteOptions {
  // When false, an existing `path` is an error (kIoError "exists; pass --force"), also when it
  // appears while the data is being written: it is never replaced.
  bool overwrite = false;
};

// Writes the concatenation of `pieces` (pointer, size) to `path` atomically.
Status WriteFileAtomically(const std::string& path,
                           const std::vector<std::pair<const void*, size_t>>& pieces,
                           const AtomicWriteOptions& options = {});

// Moves the complete file `tmp` to `path` (same file system). With overwrite, rename(2).
// Without, one atomic step that fails when `path` exists, whenever it was created:
// renameat2(RENAME_NOREPLACE), or link(2) + unlink(2) where the file system lacks it.
// `tmp` is removed in every case. Errors: kIoError naming the paths and errno text.
Status PublishFile(const std::string& tmp, const std::string& path, bool overwrite);

}  // namespace headwise

#endif  // HEADWISE_COMMON_ATOMIC_FILE_H_
