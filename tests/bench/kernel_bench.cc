// Kernel micro-benchmarks (not a test): GEMV GB/s per weight type at the Qwen2.5-0.5B shapes as %
// of the measured read bandwidth, GEMM GOPS at 512 tokens as % of the measured int8 peak, and a
// decode estimate for a Q4_K_M-like layer stack. Usage:
//   kernel_bench [--threads N] [--isa scalar|avx2|avx512] [--quick] [--types q8_0,q5_0,...]
//                [--cputime]   (time on the thread's CPU clock; with --threads 1 this measures the
//                               kernel, not the scheduler, on a machine shared with other work)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/acts.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/packed.h"
#include "quant/types.h"
#include "runtime/cpu_features.h"
#include "runtime/machine_probe.h"
#include "util/fp16.h"

using namespace brisk;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<uint8_t> RandomWeights(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> w(RowBytes(type, cols) * size_t(rows));
  for (auto& b : w) b = uint8_t(rng() & 0x3f);  // small values: no inf/NaN scales in any format
  return w;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Shape {
  const char* name;
  int64_t rows, cols;
};

bool g_cpu_time = false;  // --cputime: the calling thread's CPU clock (use with --threads 1)

double NowS() {
  if (g_cpu_time) return ThreadCpuSeconds();
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// Runs `fn` until about `budget` seconds passed (at least 3 times); median seconds per call.
template <typename Fn>
double TimeIt(Fn&& fn, double budget) {
  fn();  // warm-up
  std::vector<double> t;
  const auto start = Clock::now();
  do {
    const double a = NowS();
    fn();
    t.push_back(NowS() - a);
  } while (t.size() < 3 || std::chrono::duration<double>(Clock::now() - start).count() < budget);
  return Median(t);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  bool quick = false;
  std::string types_arg = "q8_0,q5_0,q4_k,q6_k,q4_0,q4_1,q5_1,q5_k,f16,bf16,f32";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--quick")
      quick = true;
    else if (a == "--cputime")
      g_cpu_time = true;
    else if (a == "--types" && i + 1 < argc)
      types_arg = argv[++i];
    else if (a == "--isa" && i + 1 < argc) {
      Isa isa;
      if (!ParseIsa(argv[++i], &isa) || !IsaSupported(isa)) {
        std::fprintf(stderr, "unsupported ISA %s\n", argv[i]);
        return 2;
      }
      SetIsaForTesting(isa);
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--isa I] [--quick] [--types a,b]\n", argv[0]);
      return 2;
    }
  }
  std::vector<GgmlType> types;
  for (size_t p = 0; p < types_arg.size();) {
    size_t e = types_arg.find(',', p);
    if (e == std::string::npos) e = types_arg.size();
    GgmlType t;
    if (ParseTypeName(types_arg.substr(p, e - p), &t)) types.push_back(t);
    p = e + 1;
  }
  ThreadPool pool(threads);
  const double budget = quick ? 0.15 : 0.6;
  std::printf("brisk kernel_bench %s | %s | threads %d | ISA %s | gemm from %d tokens\n",
              BRISK_VERSION, DescribeCpu().c_str(), pool.size(),
              std::string(IsaName(ActiveIsa())).c_str(), GemmMinTokens());
  const BandwidthResult bw =
      MeasureReadBandwidth(pool, quick ? (size_t(1) << 30) : (size_t(2) << 30), 3, g_cpu_time);
  const Int8PeakResult peak = MeasureInt8Peak(pool, quick ? 0.1 : 0.3, g_cpu_time);
  std::printf("measured read bandwidth %.1f GB/s (%.1f GiB buffer); int8 peak %.0f GOPS (%s)\n\n",
              bw.gb_per_s, double(bw.bytes) / (1 << 30), peak.gops, peak.instruction.c_str());

  const Shape shapes[] = {{"attn_q/o 896x896", 896, 896},
                          {"attn_k/v 128x896", 128, 896},
                          {"ffn_up 4864x896", 4864, 896},
                          {"ffn_down 896x4864", 896, 4864},
                          {"lm_head 151936x896", 151936, 896}};
  const int64_t kMaxCols = 4864;
  const int kPrefill = 512;
  Q8ActsBuffer qb(kPrefill, kMaxCols);
  std::vector<float> x(size_t(kPrefill) * kMaxCols);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  for (auto& v : x) v = nd(rng);
  std::vector<float> y(size_t(kPrefill) * 151936 / 8 + size_t(kPrefill) * kMaxCols);
  MatmulWorkspace ws(kMaxCols, pool.size());

  std::printf("%-6s %-20s %9s %8s %7s | %10s %8s %7s\n", "type", "shape", "GEMV us", "GB/s", "%bw",
              "GEMM512 ms", "GOPS", "%peak");
  for (GgmlType type : types) {
    const int bs = GetTypeTraits(type).block_size;
    for (const Shape& s : shapes) {
      if (s.cols % bs) continue;
      // Enough copies to stream >= 1 GiB per pass so GEMV reads DRAM, not the (large) L3.
      const size_t one = RowBytes(type, s.cols) * size_t(s.rows);
      const int copies =
          int(std::min<size_t>(4096, std::max<size_t>(1, ((size_t(1) << 30) + one - 1) / one)));
      std::vector<PackedWeights> pw;
      {
        const auto w = RandomWeights(type, s.rows, s.cols, 3);
        for (int c = 0; c < copies; ++c)
          pw.push_back(PackWeights(type, w.data(), s.rows, s.cols, &pool));
      }
      QuantizeActs(x.data(), s.cols, kPrefill, &qb.view(), Isa::kScalar);
      Q8Acts q = qb.view();
      q.cols = s.cols;
      q.meta_stride = s.cols / 32;  // re-quantise with this shape's row layout
      q.qs_stride = (s.cols + 63) / 64 * 64;
      QuantizeActs(x.data(), s.cols, kPrefill, &q);
      MatmulInput in;
      in.q = &q;
      in.x = x.data();
      in.ldx = s.cols;
      const double t1 = TimeIt(
                            [&] {
                              for (auto& p : pw) Matmul(pool, p, in, 1, y.data(), s.rows, ws);
                            },
                            budget) /
                        copies;
      const double gbs = double(pw[0].bytes) / t1 / 1e9;
      std::printf("%-6s %-20s %9.1f %8.1f %6.1f%% |", std::string(TypeName(type)).c_str(), s.name,
                  t1 * 1e6, gbs, 100 * gbs / bw.gb_per_s);
      if (s.rows <= 4864) {
        const double tg =
            TimeIt([&] { Matmul(pool, pw[0], in, kPrefill, y.data(), s.rows, ws); }, budget);
        const double gops = 2.0 * double(s.rows) * double(s.cols) * kPrefill / tg / 1e9;
        std::printf(" %10.2f %8.0f %6.1f%%", tg * 1e3, gops, 100 * gops / peak.gops);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return 0;
}
