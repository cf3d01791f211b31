// GPU sampling for `brisk bench` (bench/gpu_sampler.h): nvidia-smi's CSV parsed strictly (and
// garbage refused, never crashed on), readings folded into a point, and the sampler run end to
// end against a stand-in nvidia-smi: a shell script written by the test, found on $PATH.
#include "bench/gpu_sampler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/subprocess.h"
#include "test_paths.h"

namespace brisk {
namespace {

TEST(ParseNvidiaSmiCsv, OneReadingPerGpu) {
  auto r = ParseNvidiaSmiCsv("87, 40536, 312.45\n3, 1024, 70.10\n");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].util_pct, 87);
  EXPECT_EQ((*r)[0].mem_used_mib, 40536);
  EXPECT_DOUBLE_EQ((*r)[0].power_w, 312.45);
  EXPECT_EQ((*r)[1].util_pct, 3);
  // CRLF, blank lines and no final newline are fine.
  r = ParseNvidiaSmiCsv("\r\n1,2,3\r\n\n");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->size(), 1u);
}

TEST(ParseNvidiaSmiCsv, NotAvailableIsNan) {
  auto r = ParseNvidiaSmiCsv("45, 2000, [N/A]\n[Not Supported], 10, 20\n");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(std::isnan((*r)[0].power_w));
  EXPECT_TRUE(std::isnan((*r)[1].util_pct));
  EXPECT_EQ((*r)[1].power_w, 20);
}

TEST(ParseNvidiaSmiCsv, RefusesMalformedLines) {
  for (const char* text :
       {"", "\n\n", "1, 2", "1, 2, 3, 4", "1,,3", "1, 2, 3,", "a, 2, 3", "1, -2, 3", "1, 2, nan",
        "1, 2, inf", "1, 2, 3 W", "utilization.gpu [%], memory.used [MiB], power",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
        "1, 2, 3\n4, 5"}) {
    auto r = ParseNvidiaSmiCsv(text);
    EXPECT_FALSE(r.ok()) << "accepted: " << text;
    if (!r.ok()) EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << text;
  }
  auto r = ParseNvidiaSmiCsv("1, 2, 3\n4, x, 6\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("line 2"), std::string::npos) << r.message();
}

// Random bytes, and random lines of near-valid pieces (so that many parse): never a crash, and
// whatever is accepted is one reading per non-blank line with values >= 0 or NaN.
TEST(ParseNvidiaSmiCsv, RandomInputNeverCrashesOrLeaksBadValues) {
  std::mt19937 rng(31);
  const std::string alphabet = "0123456789., \n[]N/A-e+\r\t\x80\xff";
  // Lines of mostly three fields, each a valid or an invalid value.
  const std::vector<std::string> values = {"1",  "87",  "0.5", "40536", "1e3", "[N/A]", " 7 ",
                                           "-2", "nan", "inf", "",      "x",   "[]",    "1e999"};
  int accepted = 0;
  for (int i = 0; i < 40000; ++i) {
    std::string s;
    if (i % 2 == 0) {
      s.assign(rng() % 40, ' ');
      for (char& c : s) c = alphabet[rng() % alphabet.size()];
    } else {
      for (int line = int(rng() % 3); line >= 0; --line) {
        const int fields = rng() % 8 == 0 ? 2 + int(rng() % 3) : 3;
        for (int f = 0; f < fields; ++f)
          s +=
              (f ? (rng() % 2 ? ", " : ",") : "") + values[rng() % (rng() % 2 ? 7 : values.size())];
        s += rng() % 4 == 0 ? "\r\n" : "\n";
      }
    }
    auto r = ParseNvidiaSmiCsv(s);
    if (!r.ok()) continue;
    ++accepted;
    int lines = 0;
    for (size_t a = 0; a <= s.size();) {
      const size_t b = std::min(s.find('\n', a), s.size());
      if (s.find_first_not_of(" \t\r", a) < b) ++lines;
      a = b + 1;
    }
    EXPECT_EQ(r->size(), size_t(lines)) << s;
    for (const GpuReading& g : *r)
      for (double v : {g.util_pct, g.mem_used_mib, g.power_w})
        EXPECT_TRUE(std::isnan(v) || (std::isfinite(v) && v >= 0)) << s;
  }
  EXPECT_GT(accepted, 100);  // the near-valid half must reach the accepting path
}

TEST(GpuAccumulator, MeansOverSamplesSumsOverGpus) {
  GpuAccumulator a;
  EXPECT_FALSE(a.Summary().has);
  a.Add({{80, 1000, 100}, {40, 3000, 200}});    // util 60, mem 4000, power 300
  a.Add({{100, 1500, 150}, {100, 3000, 250}});  // util 100, mem 4500, power 400
  const GpuSide g = a.Summary();
  EXPECT_TRUE(g.has);
  EXPECT_EQ(g.gpus, 2);
  EXPECT_EQ(g.samples, 2);
  EXPECT_DOUBLE_EQ(g.util_mean_pct, 80);
  EXPECT_DOUBLE_EQ(g.util_max_pct, 100);
  EXPECT_DOUBLE_EQ(g.mem_used_max_mib, 4500);
  EXPECT_DOUBLE_EQ(g.power_mean_w, 350);
  EXPECT_DOUBLE_EQ(g.power_max_w, 400);
  a.Reset();
  EXPECT_FALSE(a.Summary().has);
}

TEST(GpuAccumulator, UnavailableValuesAreLeftOut) {
  GpuAccumulator a;
  a.Add({{50, 100, NAN}, {NAN, 200, NAN}});
  const GpuSide g = a.Summary();
  EXPECT_DOUBLE_EQ(g.util_mean_pct, 50);  // the one GPU that reported it
  EXPECT_DOUBLE_EQ(g.mem_used_max_mib, 300);
  EXPECT_TRUE(std::isnan(g.power_mean_w));  // a hole in the report, not 0 W
  EXPECT_TRUE(std::isnan(g.power_max_w));
}

// A stand-in nvidia-smi in a fresh directory: prints `csv` for the query it expects, fails
// otherwise, so a change of the query's arguments fails the test.
std::string WriteFakeNvidiaSmi(const std::string& csv) {
  const std::string dir = test::TempDir();
  const std::string path = dir + "/nvidia-smi";
  std::ofstream f(path);
  // The query spelled out here, not taken from NvidiaSmiQueryArgs(): the CSV parser expects
  // exactly these three values in this order, without units.
  const std::string expected =
      "--query-gpu=utilization.gpu,memory.used,power.draw --format=csv,noheader,nounits";
  f << "#!/bin/sh\n"
    << "[ \"$*\" = \"" << expected << "\" ] || { echo \"bad args: $*\" >&2; exit 9; }\n"
    << "printf '" << csv << "'\n";
  f.close();
  chmod(path.c_str(), 0755);
  return dir;
}

// Puts `dir` first on $PATH for the test's lifetime.
class PathPrefix {
 public:
  explicit PathPrefix(const std::string& dir) {
    const char* p = std::getenv("PATH");
    old_ = p ? p : "";
    setenv("PATH", (dir + ":" + old_).c_str(), 1);
  }
  ~PathPrefix() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

TEST(GpuSampler, ReadsTheStandInOnThePath) {
  PathPrefix path(WriteFakeNvidiaSmi("90, 20000, 250.5\\n70, 10000, 149.5\\n"));
  auto sampler = GpuSampler::CreateIfAvailable(/*period_s=*/0.05);
  ASSERT_NE(sampler, nullptr);
  sampler->BeginPoint();
  BenchPoint p;
  sampler->EndPoint(&p);
  ASSERT_TRUE(p.gpu.has);
  EXPECT_EQ(p.gpu.gpus, 2);
  EXPECT_GE(p.gpu.samples, 1);
  EXPECT_DOUBLE_EQ(p.gpu.util_mean_pct, 80);
  EXPECT_DOUBLE_EQ(p.gpu.mem_used_max_mib, 30000);
  EXPECT_DOUBLE_EQ(p.gpu.power_mean_w, 400);
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// A reading that started in one point and ended after the next one began counts in neither: a
// stand-in that blocks until the test creates `go` (and says "10" when it had to wait, "90"
// otherwise), a reading held across BeginPoint, then released.
TEST(GpuSampler, AReadingThatStraddlesAPointBoundaryIsDropped) {
  const std::string dir = test::TempDir();
  const std::string program = dir + "/nvidia-smi";
  {
    std::ofstream f(program);
    f << "#!/bin/sh\n"
      << "if [ -e " << dir << "/go ]; then printf '90, 100, 10\\n'; exit 0; fi\n"
      << "echo started >> " << dir << "/started\n"
      << "while [ ! -e " << dir << "/go ]; do sleep 0.01; done\n"
      << "printf '10, 100, 10\\n'\n";
  }
  chmod(program.c_str(), 0755);
  auto count_started = [&] {
    std::ifstream f(dir + "/started");
    int n = 0;
    for (std::string line; std::getline(f, line);) ++n;
    return n;
  };
  GpuSampler sampler(program, /*period_s=*/3600);  // only BeginPoint wakes its thread
  sampler.BeginPoint();                            // its thread's reading blocks
  bool counted = true;
  std::thread held([&] { counted = sampler.Sample(); });  // so does this one
  for (int i = 0; i < 100000 && count_started() < 2; ++i) usleep(1000);
  ASSERT_EQ(count_started(), 2);
  sampler.BeginPoint();  // the next point starts while both readings run
  std::ofstream(dir + "/go").close();
  held.join();
  EXPECT_FALSE(counted);
  BenchPoint p;
  sampler.EndPoint(&p);
  ASSERT_TRUE(p.gpu.has);
  EXPECT_EQ(p.gpu.util_max_pct, 90);  // nothing of the readings that waited
  EXPECT_EQ(p.gpu.util_mean_pct, 90);
}

TEST(GpuSampler, GarbageFromTheToolMeansNoReading) {
  PathPrefix path(WriteFakeNvidiaSmi("No devices were found\\n"));
  auto sampler = GpuSampler::CreateIfAvailable(/*period_s=*/0.05);
  ASSERT_NE(sampler, nullptr);
  EXPECT_FALSE(sampler->Sample());
  BenchPoint p;
  sampler->BeginPoint();
  sampler->EndPoint(&p);
  EXPECT_FALSE(p.gpu.has);
}

TEST(GpuSampler, NoneWithoutNvidiaSmi) {
  const char* p = std::getenv("PATH");
  const std::string old = p ? p : "";
  setenv("PATH", test::TempDir().c_str(), 1);  // an empty directory
  EXPECT_EQ(GpuSampler::CreateIfAvailable(), nullptr);
  setenv("PATH", old.c_str(), 1);
}

TEST(RunCommandOutput, OutputExitStatusAndTimeout) {
  auto r = RunCommandOutput({"/bin/sh", "-c", "printf 'a\\nb'"});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(*r, "a\nb");
  r = RunCommandOutput({"/bin/sh", "-c", "exit 3"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.message().find("exit status 3"), std::string::npos) << r.message();
  r = RunCommandOutput({"/bin/sh", "-c", "sleep 5"}, {.timeout_s = 0.2});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("timed out"), std::string::npos) << r.message();
  r = RunCommandOutput({"/bin/sh", "-c", "yes"}, {.timeout_s = 5, .max_output = 1000});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  // A program that closes its output but does not exit is waited for no longer than the limit.
  r = RunCommandOutput({"/bin/sh", "-c", "exec >&-; sleep 30"}, {.timeout_s = 0.2});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.message().find("timed out"), std::string::npos) << r.message();
  r = RunCommandOutput({"/no/such/program"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace brisk
