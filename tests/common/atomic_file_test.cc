#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/mapped_file.h"

namespace headwise {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/hw_atomic_XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "";
}

// Names in `dir`, sorted.
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void WritePlain(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
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
  EXPECT_EQ(Listing(dir), std::vector<std::string>{"out.bin"});  // no temporary left
  std::filesystem::remove_all(dir);
}

TEST(AtomicFile, UncreatableTemporaryIsAnIoErrorNamingIt) {
  Status s = WriteFileAtomically("/nonexistent-dir-hw/out.bin", {{"x", 1}});
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
  EXPECT_NE(s.message().find("/nonexistent-dir-hw/out.bin.tmp."), std::string::npos) << s.ToString();
}

// The output appears after the early existence check, while the data is being written: the
// final step must refuse instead of replacing it.
TEST(AtomicFile, PublishNeverReplacesAFileThatAppearedMeanwhile) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string path = dir + "/out.bin", tmp = dir + "/out.bin.tmp.test";
  WritePlain(tmp, "ours");
  WritePlain(path, "theirs");
  Status s = PublishFile(tmp, path, /*overwrite=*/false);
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
  EXPECT_NE(s.message().find("output '" + path + "' exists; pass --force"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(*ReadFileToString(path), "theirs");
  EXPECT_EQ(Listing(dir), std::vector<std::string>{"out.bin"});  // the temporary is gone

  WritePlain(tmp, "ours");
  ASSERT_TRUE(PublishFile(tmp, path, /*overwrite=*/true).ok());
  EXPECT_EQ(*ReadFileToString(path), "ours");
  EXPECT_EQ(Listing(dir), std::vector<std::string>{"out.bin"});

  const std::string fresh = dir + "/fresh.bin";
  WritePlain(tmp, "new");
  ASSERT_TRUE(PublishFile(tmp, fresh, /*overwrite=*/false).ok());
  EXPECT_EQ(*ReadFileToString(fresh), "new");
  EXPECT_EQ(Listing(dir), (std::vector<std::string>{"fresh.bin", "out.bin"}));
  std::filesystem::remove_all(dir);
}

// Writers racing for one new output: exactly one wins, the others are refused, and the file
// holds the winner's bytes whole (each writer has its own temporary, also within a process).
TEST(AtomicFile, RacingWritersOfOneOutputNeverReplaceEachOther) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  constexpr int kWriters = 4;
  std::vector<std::string> payloads;
  for (int w = 0; w < kWriters; ++w) payloads.emplace_back(1 << 20, static_cast<char>('a' + w));
  for (int round = 0; round < 10; ++round) {
    const std::string path = dir + "/out" + std::to_string(round) + ".bin";
    std::vector<Status> results(kWriters);
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w) {
      threads.emplace_back([&, w] {
        results[w] = WriteFileAtomically(path, {{payloads[w].data(), payloads[w].size()}});
      });
    }
    for (auto& t : threads) t.join();
    int winners = 0, winner = -1;
    for (int w = 0; w < kWriters; ++w) {
      if (results[w].ok()) {
        ++winners;
        winner = w;
      } else {
        EXPECT_NE(results[w].message().find("exists"), std::string::npos) << results[w].ToString();
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    auto content = ReadFileToString(path);
    ASSERT_TRUE(content.ok());
    EXPECT_TRUE(*content == payloads[winner]) << "round " << round << ": file is not writer "
                                              << winner << "'s bytes";
  }
  EXPECT_EQ(Listing(dir).size(), 10u);  // the outputs only, no temporaries
  std::filesystem::remove_all(dir);
}

TEST(MappedFile, MissingFileNamesPath) {
  auto r = MappedFile::Open("/no/such/file.hwm");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/no/such/file.hwm"), std::string::npos);
}

}  // namespace
}  // namespace headwise
