// common/mapped_file.h: a read-only view of a whole file, memory-mapped where possible.
//
// Ownership: MappedFile owns the mapping and unmaps it in its destructor; pointers from data()
// are valid while the MappedFile lives. Move-only. An empty file maps to size() == 0.
//
// Residency: the mapping is read-only and private, so no page of it is ever modified and any
// page may be dropped from this process's resident set at any time (ReleasePages) and read
// again, with the same bytes, from the page cache or the file on its next access. What the
// process still reads comes back; what it no longer reads stops counting in its RSS.
#ifndef HEADWISE_COMMON_MAPPED_FILE_H_
#define HEADWISE_COMMON_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "headwise/status.hpp"

namespace headwise {

class MappedFile {
 public:
  // Maps `path` read-only. Errors: kIoError naming the path and errno text.
  static Result<MappedFile> Open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // Drops the whole pages inside [p, p + n) from the resident set (madvise MADV_DONTNEED);
  // pages the range covers only in part stay. Advisory and thread-safe: does nothing for the
  // part of the range outside the mapping, on an empty MappedFile, or where madvise fails.
  // Returns the bytes released (whole pages).
  size_t ReleasePages(const void* p, size_t n) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole (small) file into a string. Errors: kIoError naming the path.
Result<std::string> ReadFileToString(const std::string& path);

}  // namespace headwise

#endif  // HEADWISE_COMMON_MAPPED_FILE_H_
