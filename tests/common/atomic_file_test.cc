#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/mapped_file.h"

namespace headwise {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/hw_atomic_XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "";
}

TEST(AtomicFile, WritesRefusesOverwriteUnlessAsked) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string path = dir + "/out.bin";
  const std::string a = "hello ", b = "world";
  ASSERT_TRUE(WriteFileAtomically(path, {{a.data(), a.size()}, {b.data(), b.size()}}).ok());
  auto read = ReadFileToString(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "hello world");

  Status again = WriteFileAtomically(path, {{b.data(), b.size()}});
  EXPECT_EQ(again.code(), ErrorCode::kIoError);
  EXPECT_NE(again.message().find("exists"), std::string::npos);
  EXPECT_EQ(*ReadFileToString(path), "hello world");  // untouched

  AtomicWriteOptions force;
  force.overwrite = true;
  ASSERT_TRUE(WriteFileAtomically(path, {{b.data(), b.size()}}, force).ok());
  EXPECT_EQ(*ReadFileToString(path), "world");
  auto mapped = MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(mapped->data()), mapped->size()), "world");
}

TEST(AtomicFile, FailureLeavesNoTemporary) {
  const std::string path = "/nonexistent-dir-hw/out.bin";
  Status s = WriteFileAtomically(path, {{"x", 1}});
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
  struct stat st {};
  EXPECT_NE(::stat((path + ".tmp." + std::to_string(::getpid())).c_str(), &st), 0);
}

TEST(MappedFile, MissingFileNamesPath) {
  auto r = MappedFile::Open("/no/such/file.hwm");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/no/such/file.hwm"), std::string::npos);
}

}  // namespace
}  // namespace headwise
