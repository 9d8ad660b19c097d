#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace headwise {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

Status WriteAll(int fd, const void* data, size_t size, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write '" + path + "': " + ErrnoText());
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path,
                           const std::vector<std::pair<const void*, size_t>>& pieces,
                           const AtomicWriteOptions& options) {
  struct stat st {};
  if (!options.overwrite && ::stat(path.c_str(), &st) == 0) {
    return IoError("output '" + path + "' exists; pass --force to overwrite it");
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create '" + tmp + "': " + ErrnoText());
  Status status;
  for (const auto& piece : pieces) {
    status = WriteAll(fd, piece.first, piece.second, tmp);
    if (!status.ok()) break;
  }
  if (status.ok() && ::fsync(fd) != 0) status = IoError("cannot sync '" + tmp + "': " + ErrnoText());
  if (::close(fd) != 0 && status.ok()) status = IoError("cannot close '" + tmp + "': " + ErrnoText());
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = IoError("cannot rename '" + tmp + "' to '" + path + "': " + ErrnoText());
  }
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

}  // namespace headwise
