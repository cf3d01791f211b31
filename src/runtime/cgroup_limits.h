// The limits a container puts on this process (cgroup v1 or v2): memory and CPU quota. brisk sizes
// its defaults from them (compute threads, the KV cache budget) instead of from the host, so a
// container with a 1 GiB limit and half a CPU is not OOM-killed nor oversubscribed.
//
// Where: /proc/self/cgroup names the process's cgroup per hierarchy, /proc/self/mountinfo where
// each hierarchy is mounted. A limit set on an ancestor applies too, so each file is read from
// the process's cgroup up to the mount point and the smallest value wins. The parsers take the
// texts and a root prefix so tests run them on fixture trees.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace brisk {

struct CgroupLimits {
  int version = 0;                      // 0: no cgroup controller found, else 1 or 2
  std::optional<int64_t> memory_bytes;  // memory.max / memory.limit_in_bytes; none = unlimited
  std::optional<double> cpu_quota;      // CPUs: cpu.max or cfs_quota_us / cfs_period_us
  std::string memory_dir, cpu_dir;      // the cgroup directories read (for the report)
};

// From the texts of /proc/self/cgroup and /proc/self/mountinfo; files are read under `root`
// ("" on a live system, a fixture directory in tests).
CgroupLimits ReadCgroupLimits(std::string_view proc_self_cgroup, std::string_view mountinfo,
                              const std::string& root = "");

// This process's limits (read once, then cached).
const CgroupLimits& ProcessCgroupLimits();

// Compute threads for `cores` usable cores (the affinity mask) under `limits`: at most
// ceil(cpu quota), at least 1.
int ThreadsWithin(int cores, const CgroupLimits& limits);

// A size as people write it: "1.4G", "1400M", "512MiB", "1GB", "1073741824" (K/M/G/T, with or
// without "iB"/"B", all binary multiples, as Docker and Kubernetes' Gi/Mi read for memory).
// Null when it is not a positive size.
std::optional<int64_t> ParseByteSize(std::string_view text);

// "1.0 GiB", "512 MiB": for messages.
std::string FormatBytes(int64_t bytes);

}  // namespace brisk
