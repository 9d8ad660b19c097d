#include "common/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace headwise {

Result<MappedFile> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError("cannot stat '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError("'" + path + "' is not a regular file");
  }
  MappedFile file;
  file.size_ = static_cast<size_t>(st.st_size);
  if (file.size_ > 0) {
    void* p = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return IoError("cannot map '" + path + "': " + std::strerror(err));
    }
    file.data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return file;
}

size_t MappedFile::ReleasePages(const void* p, size_t n) const {
  if (data_ == nullptr || p == nullptr || n == 0) return 0;
  const auto begin = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t end = begin + size_;
  uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  uintptr_t hi = n > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + n;
  lo = std::max(lo, begin);
  hi = std::min(hi, end);
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  // The mapping starts on a page boundary; its last page may be partial, and the kernel drops
  // that one whole when asked (the bytes past the file's end are not the process's data).
  lo = (lo + page - 1) / page * page;
  hi = hi == end ? (hi + page - 1) / page * page : hi / page * page;
  if (lo >= hi) return 0;
  if (::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) != 0) return 0;
  return hi - lo;
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

Result<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError("error reading '" + path + "'");
  return ss.str();
}

}  // namespace headwise
