// common/mapped_file.h: a read-only view of a whole file, memory-mapped where possible.
//
// Ownership: MappedFile owns the mapping and unmaps it in its destructor; pointers from data()
// are valid while the MappedFile lives. Move-only. An empty file maps to size() == 0.
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

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole (small) file into a string. Errors: kIoError naming the path.
Result<std::string> ReadFileToString(const std::string& path);

}  // namespace headwise

#endif  // HEADWISE_COMMON_MAPPED_FILE_H_
