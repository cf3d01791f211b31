#include "runtime/cgroup_limits.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace brisk {
namespace {

// v1 writes "no limit" as a page-rounded INT64_MAX; anything this large is no limit.
constexpr int64_t kUnlimited = int64_t(1) << 60;

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  int64_t v = 0;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    if (v > (INT64_MAX - 9) / 10) return kUnlimited;  // saturate: far beyond any real limit
    v = v * 10 + (s[i] - '0');
  }
  return s[0] == '-' ? -v : v;
}

// One mounted hierarchy: its mount point and the cgroup path its root stands for.
struct Mount {
  std::string point, root;
};

// The mount of the v1 hierarchy with `controller`, or of the v2 hierarchy (controller "").
std::optional<Mount> FindMount(std::string_view mountinfo, std::string_view controller) {
  for (std::string_view line : Split(mountinfo, '\n')) {
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const std::vector<std::string_view> pre = Split(line.substr(0, dash), ' ');
    const std::vector<std::string_view> post = Split(line.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    const bool v2 = post[0] == "cgroup2";
    if (controller.empty() ? !v2 : post[0] != "cgroup") continue;
    if (!controller.empty()) {
      const auto opts = Split(post[2], ',');
      if (std::find(opts.begin(), opts.end(), controller) == opts.end()) continue;
    }
    return Mount{std::string(pre[4]), std::string(pre[3])};
  }
  return std::nullopt;
}

// This process's cgroup path in the v1 hierarchy with `controller` (or v2's, controller "").
std::optional<std::string> CgroupPath(std::string_view proc_self_cgroup,
                                      std::string_view controller) {
  for (std::string_view line : Split(proc_self_cgroup, '\n')) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string_view::npos || b == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(a + 1, b - a - 1);
    const std::string_view path = line.substr(b + 1);
    if (controller.empty()) {
      if (line.substr(0, a) == "0" && controllers.empty()) return std::string(path);
      continue;
    }
    const auto names = Split(controllers, ',');
    if (std::find(names.begin(), names.end(), controller) != names.end()) return std::string(path);
  }
  return std::nullopt;
}

// The directories from the process's cgroup up to the hierarchy's mount point, deepest first.
std::vector<std::string> CgroupDirs(const Mount& m, std::string path, const std::string& root) {
  // Inside a cgroup namespace the mount root is the process's own cgroup ("/"); on the host a
  // mount of a sub-tree has that sub-tree as root and the path starts with it.
  if (m.root != "/" && path.rfind(m.root, 0) == 0) path = path.substr(m.root.size());
  if (path.find("..") != std::string::npos) path = "/";  // never leave the mount
  std::vector<std::string> dirs;
  for (;;) {
    dirs.push_back(root + m.point + (path == "/" ? "" : path));
    if (path.empty() || path == "/") break;
    const size_t slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
  return dirs;
}

// The smallest value `read` finds over the directories (none: no limit anywhere).
template <typename T, typename F>
std::optional<T> Smallest(const std::vector<std::string>& dirs, F read) {
  std::optional<T> best;
  for (const std::string& d : dirs)
    if (std::optional<T> v = read(d); v && (!best || *v < *best)) best = v;
  return best;
}

std::optional<int64_t> MemoryV1(const std::string& dir) {
  auto s = ReadSmallFile(dir + "/memory.limit_in_bytes");
  auto v = s ? ParseInt(*s) : std::nullopt;
  return v && *v > 0 && *v < kUnlimited ? v : std::nullopt;
}

std::optional<int64_t> MemoryV2(const std::string& dir) {
  auto s = ReadSmallFile(dir + "/memory.max");
  auto v = s && *s != "max" ? ParseInt(*s) : std::nullopt;
  return v && *v > 0 && *v < kUnlimited ? v : std::nullopt;
}

std::optional<double> Quota(std::optional<int64_t> quota, std::optional<int64_t> period) {
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return double(*quota) / double(*period);
}

std::optional<double> CpuV1(const std::string& dir) {
  auto q = ReadSmallFile(dir + "/cpu.cfs_quota_us");
  auto p = ReadSmallFile(dir + "/cpu.cfs_period_us");
  return Quota(q ? ParseInt(*q) : std::nullopt, p ? ParseInt(*p) : std::nullopt);
}

std::optional<double> CpuV2(const std::string& dir) {
  auto s = ReadSmallFile(dir + "/cpu.max");
  if (!s) return std::nullopt;
  const auto parts = Split(*s, ' ');
  if (parts.size() != 2 || parts[0] == "max") return std::nullopt;
  return Quota(ParseInt(parts[0]), ParseInt(parts[1]));
}

}  // namespace

CgroupLimits ReadCgroupLimits(std::string_view proc_self_cgroup, std::string_view mountinfo,
                              const std::string& root) {
  CgroupLimits out;
  auto v1_mem = FindMount(mountinfo, "memory");
  auto v1_cpu = FindMount(mountinfo, "cpu");
  auto mem_path = CgroupPath(proc_self_cgroup, "memory");
  auto cpu_path = CgroupPath(proc_self_cgroup, "cpu");
  if (v1_mem && mem_path) {
    const auto dirs = CgroupDirs(*v1_mem, *mem_path, root);
    out.version = 1;
    out.memory_dir = dirs.front();
    out.memory_bytes = Smallest<int64_t>(dirs, MemoryV1);
  }
  if (v1_cpu && cpu_path) {
    const auto dirs = CgroupDirs(*v1_cpu, *cpu_path, root);
    out.version = 1;
    out.cpu_dir = dirs.front();
    out.cpu_quota = Smallest<double>(dirs, CpuV1);
  }
  if (out.version == 1) return out;
  auto v2 = FindMount(mountinfo, "");
  auto path = CgroupPath(proc_self_cgroup, "");
  if (!v2 || !path) return out;
  const auto dirs = CgroupDirs(*v2, *path, root);
  out.version = 2;
  out.memory_dir = out.cpu_dir = dirs.front();
  out.memory_bytes = Smallest<int64_t>(dirs, MemoryV2);
  out.cpu_quota = Smallest<double>(dirs, CpuV2);
  return out;
}

const CgroupLimits& ProcessCgroupLimits() {
  static const CgroupLimits limits = [] {
    const auto cgroup = ReadSmallFile("/proc/self/cgroup");
    const auto mountinfo = ReadSmallFile("/proc/self/mountinfo");
    if (!cgroup || !mountinfo) return CgroupLimits{};
    return ReadCgroupLimits(*cgroup, *mountinfo);
  }();
  return limits;
}

int ThreadsWithin(int cores, const CgroupLimits& limits) {
  int n = std::max(1, cores);
  if (limits.cpu_quota) n = std::min(n, std::max(1, int(std::ceil(*limits.cpu_quota - 1e-9))));
  return n;
}

std::optional<int64_t> ParseByteSize(std::string_view t) {
  size_t i = 0;
  while (i < t.size() && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.')) ++i;
  if (i == 0 || i > 24) return std::nullopt;
  char* end = nullptr;
  const std::string number(t.substr(0, i));
  const double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !(v > 0)) return std::nullopt;
  std::string unit(t.substr(i));
  for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();  // "GB", "GIB" -> "G", "GI"
  if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();
  int shift = 0;
  if (unit == "K")
    shift = 10;
  else if (unit == "M")
    shift = 20;
  else if (unit == "G")
    shift = 30;
  else if (unit == "T")
    shift = 40;
  else if (!unit.empty() && unit != "B")
    return std::nullopt;
  const double bytes = std::ldexp(v, shift);
  if (bytes < 1 || bytes > 9.0e18) return std::nullopt;
  return int64_t(bytes);
}

std::string FormatBytes(int64_t bytes) {
  char buf[32];
  if (bytes >= (int64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(int64_t(1) << 30));
  else
    std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(bytes >> 20));
  return buf;
}

}  // namespace brisk
