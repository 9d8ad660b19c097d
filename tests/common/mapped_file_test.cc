// MappedFile::ReleasePages: drops exactly the whole pages inside the range from the resident set
// (checked with the present bit of /proc/self/pagemap), keeps pages the range covers in part,
// and never changes what a read returns.
#include "common/mapped_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace headwise {
namespace {

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Whether the page holding `p` is mapped in this process (pagemap bit 63). Under emulation
// (qemu-user does not pass MADV_DONTNEED through for private file mappings, which it may have
// made anonymous, and reports success) the tests below check contents and return values only.
// Whether pagemap residency can be checked here (false under qemu-user, see above).
constexpr bool kResidencyVisible = !HEADWISE_TEST_EMULATED;

bool Present(const void* p) {
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return true;
  uint64_t entry = 0;
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / PageSize() * sizeof entry);
  const bool ok = pread(fd, &entry, sizeof entry, at) == static_cast<ssize_t>(sizeof entry);
  close(fd);
  return !ok || (entry >> 63) != 0;
}

class ReleasePagesTest : public ::testing::Test {
 protected:
  void Write(size_t size) {
    path_ = ::testing::TempDir() + "mapped_file_test_" + std::to_string(getpid()) + ".bin";
    bytes_.resize(size);
    for (size_t i = 0; i < size; ++i) bytes_[i] = static_cast<char>((i * 131 + i / 4096) & 0xff);
    std::ofstream(path_, std::ios::binary).write(bytes_.data(), static_cast<std::streamsize>(size));
    auto file = MappedFile::Open(path_);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    file_ = std::move(*file);
    ASSERT_EQ(file_.size(), size);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // Reads every byte and compares it with what was written.
  bool SameBytes() const {
    for (size_t i = 0; i < bytes_.size(); ++i) {
      if (static_cast<char>(file_.data()[i]) != bytes_[i]) return false;
    }
    return true;
  }

  std::string path_;
  std::vector<char> bytes_;
  MappedFile file_;
};

TEST_F(ReleasePagesTest, DropsWholePagesAndKeepsTheBytes) {
  const size_t page = PageSize();
  Write(8 * page);
  ASSERT_TRUE(SameBytes());  // every page touched
  const uint8_t* d = file_.data();
  // [page, 3 * page + 50): whole pages 1 and 2; page 3 only in part.
  EXPECT_EQ(file_.ReleasePages(d + page, 2 * page + 50), 2 * page);
  EXPECT_EQ(file_.ReleasePages(d + 4 * page + 1, 3 * page), 2 * page) << "pages 5 and 6";
  if (kResidencyVisible) {
    EXPECT_TRUE(Present(d)) << "page 0 was not in the range";
    EXPECT_FALSE(Present(d + page));
    EXPECT_FALSE(Present(d + 2 * page));
    EXPECT_TRUE(Present(d + 3 * page)) << "page 3 was only partly in the range";
    EXPECT_TRUE(Present(d + 4 * page)) << "page 4 was only partly in the range";
    EXPECT_FALSE(Present(d + 5 * page));
    EXPECT_TRUE(Present(d + 7 * page)) << "page 7 was only partly in the range";
  }
  EXPECT_TRUE(SameBytes());
  EXPECT_EQ(file_.ReleasePages(d, file_.size()), 8 * page);
  if (kResidencyVisible) {
    for (size_t p = 0; p < 8; ++p) EXPECT_FALSE(Present(d + p * page)) << "page " << p;
  }
  EXPECT_TRUE(SameBytes());
}

TEST_F(ReleasePagesTest, RangeReachingThePartialLastPageReleasesIt) {
  const size_t page = PageSize();
  Write(3 * page + 100);
  ASSERT_TRUE(SameBytes());
  const uint8_t* d = file_.data();
  EXPECT_EQ(file_.ReleasePages(d + 2 * page, page + 100), 2 * page);
  EXPECT_EQ(file_.ReleasePages(d + 2 * page, page + 99), page) << "the last byte is not in it";
  EXPECT_TRUE(SameBytes());
}

TEST_F(ReleasePagesTest, OutsideTheMappingOrEmptyReleasesNothing) {
  const size_t page = PageSize();
  Write(4 * page);
  const uint8_t* d = file_.data();
  std::vector<uint8_t> other(4 * page);
  EXPECT_EQ(file_.ReleasePages(other.data(), other.size()), 0u);
  EXPECT_EQ(file_.ReleasePages(nullptr, page), 0u);
  EXPECT_EQ(file_.ReleasePages(d, 0), 0u);
  EXPECT_EQ(file_.ReleasePages(d + 10, page - 20), 0u);  // inside one page
  // Partly outside: clipped to the mapping.
  EXPECT_EQ(file_.ReleasePages(d + 3 * page, 10 * page), page);
  EXPECT_EQ(MappedFile().ReleasePages(d, page), 0u);
  EXPECT_TRUE(SameBytes());
}

}  // namespace
}  // namespace headwise
