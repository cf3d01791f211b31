// cgroup v1 and v2 limits read from fixture trees (the texts of /proc/self/cgroup and
// /proc/self/mountinfo, the limit files under a temporary root): nested limits take the smallest,
// "max" and v1's huge "unlimited" mean none, a cgroup namespace's "/" root maps to the mount.
#include "runtime/cgroup_limits.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace brisk {
namespace {

namespace fs = std::filesystem;

class CgroupFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("brisk-cgroup-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  fs::path root_;
};

constexpr const char* kV1Mountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n";
constexpr const char* kV1Cgroup =
    "9:name=systemd:/\n4:memory:/pods/brisk\n2:cpu,cpuacct:/pods/brisk\n1:cpuset:/\n";

TEST_F(CgroupFixture, V1TakesTheSmallestLimitOnThePath) {
  Write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712");
  Write("sys/fs/cgroup/memory/pods/memory.limit_in_bytes", "2147483648");
  Write("sys/fs/cgroup/memory/pods/brisk/memory.limit_in_bytes", "1073741824");
  Write("sys/fs/cgroup/cpu,cpuacct/pods/brisk/cpu.cfs_quota_us", "50000");
  Write("sys/fs/cgroup/cpu,cpuacct/pods/brisk/cpu.cfs_period_us", "100000");
  const CgroupLimits l = ReadCgroupLimits(kV1Cgroup, kV1Mountinfo, root_.string());
  EXPECT_EQ(l.version, 1);
  ASSERT_TRUE(l.memory_bytes.has_value());
  EXPECT_EQ(*l.memory_bytes, int64_t(1) << 30);
  ASSERT_TRUE(l.cpu_quota.has_value());
  EXPECT_DOUBLE_EQ(*l.cpu_quota, 0.5);
  EXPECT_EQ(l.memory_dir, root_.string() + "/sys/fs/cgroup/memory/pods/brisk");
  EXPECT_EQ(ThreadsWithin(16, l), 1);
  // The parent's limit binds when it is the smaller one.
  Write("sys/fs/cgroup/memory/pods/memory.limit_in_bytes", "536870912");
  EXPECT_EQ(*ReadCgroupLimits(kV1Cgroup, kV1Mountinfo, root_.string()).memory_bytes, int64_t(512)
                                                                                         << 20);
}

TEST_F(CgroupFixture, V1UnlimitedIsNoLimit) {
  Write("sys/fs/cgroup/memory/pods/brisk/memory.limit_in_bytes", "9223372036854771712");
  Write("sys/fs/cgroup/cpu,cpuacct/pods/brisk/cpu.cfs_quota_us", "-1");
  Write("sys/fs/cgroup/cpu,cpuacct/pods/brisk/cpu.cfs_period_us", "100000");
  const CgroupLimits l = ReadCgroupLimits(kV1Cgroup, kV1Mountinfo, root_.string());
  EXPECT_EQ(l.version, 1);
  EXPECT_FALSE(l.memory_bytes.has_value());
  EXPECT_FALSE(l.cpu_quota.has_value());
  EXPECT_EQ(ThreadsWithin(16, l), 16);
}

constexpr const char* kV2Mountinfo =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

TEST_F(CgroupFixture, V2ReadsMaxFilesAndQuota) {
  Write("sys/fs/cgroup/kubepods/pod1/memory.max", "max");
  Write("sys/fs/cgroup/kubepods/pod1/cpu.max", "250000 100000");
  Write("sys/fs/cgroup/kubepods/memory.max", "3221225472");
  Write("sys/fs/cgroup/kubepods/cpu.max", "max 100000");
  const CgroupLimits l = ReadCgroupLimits("0::/kubepods/pod1\n", kV2Mountinfo, root_.string());
  EXPECT_EQ(l.version, 2);
  ASSERT_TRUE(l.memory_bytes.has_value());
  EXPECT_EQ(*l.memory_bytes, int64_t(3) << 30);
  ASSERT_TRUE(l.cpu_quota.has_value());
  EXPECT_DOUBLE_EQ(*l.cpu_quota, 2.5);
  EXPECT_EQ(ThreadsWithin(16, l), 3);  // ceil(2.5)
  EXPECT_EQ(ThreadsWithin(2, l), 2);   // never more than the cores
}

// Inside a container's cgroup namespace the process's cgroup is "/" and the mount's root is its
// own cgroup: the limit files are at the mount point itself.
TEST_F(CgroupFixture, V2NamespaceRoot) {
  Write("sys/fs/cgroup/memory.max", "1073741824");
  Write("sys/fs/cgroup/cpu.max", "50000 100000");
  const CgroupLimits l = ReadCgroupLimits("0::/\n", kV2Mountinfo, root_.string());
  EXPECT_EQ(*l.memory_bytes, int64_t(1) << 30);
  EXPECT_EQ(ThreadsWithin(8, l), 1);
}

TEST_F(CgroupFixture, NothingMountedOrMalformedMeansNoLimits) {
  EXPECT_EQ(ReadCgroupLimits("", "", root_.string()).version, 0);
  Write("sys/fs/cgroup/memory.max", "lots");
  Write("sys/fs/cgroup/cpu.max", "1 2 3");
  const CgroupLimits l = ReadCgroupLimits("0::/\n", kV2Mountinfo, root_.string());
  EXPECT_EQ(l.version, 2);
  EXPECT_FALSE(l.memory_bytes.has_value());
  EXPECT_FALSE(l.cpu_quota.has_value());
  // A path that tries to climb out of the mount is read at the mount point.
  Write("sys/fs/cgroup/memory.max", "4096");
  EXPECT_EQ(*ReadCgroupLimits("0::/../../etc\n", kV2Mountinfo, root_.string()).memory_bytes, 4096);
}

TEST(ParseByteSizeTest, WhatPeopleWrite) {
  EXPECT_EQ(ParseByteSize("1073741824"), int64_t(1) << 30);
  EXPECT_EQ(ParseByteSize("1G"), int64_t(1) << 30);
  EXPECT_EQ(ParseByteSize("1Gi"), int64_t(1) << 30);
  EXPECT_EQ(ParseByteSize("1GiB"), int64_t(1) << 30);
  EXPECT_EQ(ParseByteSize("512m"), int64_t(512) << 20);
  EXPECT_EQ(ParseByteSize("1.5G"), int64_t(3) << 29);
  for (const char* bad : {"", "G", "-1G", "0", "1X", "1.2.3G", "1GG", "abc", "1e3"})
    EXPECT_FALSE(ParseByteSize(bad).has_value()) << bad;
}

TEST(FormatBytesTest, Units) {
  EXPECT_EQ(FormatBytes(int64_t(3) << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(int64_t(512) << 20), "512 MiB");
}

}  // namespace
}  // namespace brisk
