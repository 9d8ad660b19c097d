#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace headwise {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

Status ExistsError(const std::string& path) {
  return IoError("output '" + path + "' exists; pass --force to overwrite it");
}

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

// Creates a temporary beside `path` that no other writer (thread or process) uses: the name
// carries the pid and a counter, and O_EXCL skips a leftover of a crashed run with that pid.
int CreateTemporary(const std::string& path, std::string* tmp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    *tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// Moves without replacing, as one step. RENAME_NOREPLACE where the C library and the file
// system offer it; otherwise link(2), which fails with EEXIST as atomically, then unlink(2).
Status MoveNoReplace(const std::string& tmp, const std::string& path) {
#if defined(__GLIBC__) && defined(RENAME_NOREPLACE)
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) {
    return Status::Ok();
  }
  if (errno == EEXIST) return ExistsError(path);
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
    return IoError("cannot rename '" + tmp + "' to '" + path + "': " + ErrnoText());
  }
#endif
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    if (errno == EEXIST) return ExistsError(path);
    return IoError("cannot link '" + tmp + "' to '" + path + "': " + ErrnoText());
  }
  ::unlink(tmp.c_str());
  return Status::Ok();
}

// Makes the new directory entry durable. Best effort: some file systems refuse fsync on a
// directory, and the file itself is complete either way.
void SyncParentDirectory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

Status PublishFile(const std::string& tmp, const std::string& path, bool overwrite) {
  Status status;
  if (overwrite) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      status = IoError("cannot rename '" + tmp + "' to '" + path + "': " + ErrnoText());
    }
  } else {
    status = MoveNoReplace(tmp, path);
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  SyncParentDirectory(path);
  return status;
}

Status WriteFileAtomically(const std::string& path,
                           const std::vector<std::pair<const void*, size_t>>& pieces,
                           const AtomicWriteOptions& options) {
  // An early answer that spares writing the data; PublishFile makes the decision that counts.
  struct stat st {};
  if (!options.overwrite && ::stat(path.c_str(), &st) == 0) return ExistsError(path);
  std::string tmp;
  const int fd = CreateTemporary(path, &tmp);
  if (fd < 0) return IoError("cannot create '" + tmp + "': " + ErrnoText());
  Status status;
  for (const auto& piece : pieces) {
    status = WriteAll(fd, piece.first, piece.second, tmp);
    if (!status.ok()) break;
  }
  if (status.ok() && ::fsync(fd) != 0) status = IoError("cannot sync '" + tmp + "': " + ErrnoText());
  if (::close(fd) != 0 && status.ok()) status = IoError("cannot close '" + tmp + "': " + ErrnoText());
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  return PublishFile(tmp, path, options.overwrite);
}

}  // namespace headwise
