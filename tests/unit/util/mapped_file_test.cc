// MappedFile::DropPages: the dropped pages leave the process's resident set, the bytes read back
// unchanged, and ranges outside the mapping are ignored.
#include "util/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace brisk {
namespace {

constexpr size_t kBytes = size_t(32) << 20;

// RssFile of /proc/self/status, in bytes: the process's resident file-backed pages.
int64_t RssFileBytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("RssFile:", 0) == 0) return std::stoll(line.substr(8)) * 1024;
  return -1;
}

uint64_t Checksum(const uint8_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i += 64) s = s * 31 + p[i];  // touches every page
  return s;
}

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/mapped_file_test_" + std::to_string(getpid()) + ".bin";
    std::vector<uint8_t> bytes(kBytes);
    for (size_t i = 0; i < kBytes; ++i) bytes[i] = uint8_t(i * 2654435761u >> 24);
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    expected_ = Checksum(bytes.data(), bytes.size());
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string path_;
  uint64_t expected_ = 0;
};

TEST_F(MappedFileTest, DroppedPagesLeaveTheResidentSetAndReadBackTheSame) {
  auto f = MappedFile::Open(path_);
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_EQ(Checksum(f->data(), f->size()), expected_);
  const int64_t touched = RssFileBytes();
  ASSERT_GT(touched, int64_t(kBytes));
  f->DropPages(f->data() + 100, f->size() - 200);  // unaligned ends: the edge pages stay
  const int64_t dropped = RssFileBytes();
  EXPECT_LT(dropped, touched - int64_t(kBytes) + (int64_t(1) << 20))
      << "RssFile " << touched << " -> " << dropped;
  EXPECT_EQ(Checksum(f->data(), f->size()), expected_);  // paged in again from the file
}

TEST_F(MappedFileTest, RangesOutsideTheMappingAreIgnored) {
  auto f = MappedFile::Open(path_);
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_EQ(Checksum(f->data(), f->size()), expected_);
  const int64_t touched = RssFileBytes();
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  f->DropPages(f->data() + page, f->size());  // runs past the end
  f->DropPages(reinterpret_cast<const uint8_t*>(uintptr_t(f->data()) - page),
               2 * page);               // starts before the mapping
  std::vector<uint8_t> heap(4 * page);  // not the mapping at all
  f->DropPages(heap.data(), heap.size());
  EXPECT_GT(RssFileBytes(), touched - int64_t(kBytes) / 2);
  EXPECT_EQ(Checksum(f->data(), f->size()), expected_);
}

}  // namespace
}  // namespace brisk
