// Kernel micro-benchmarks (not a test): GEMV GB/s per weight type at the Qwen2.5-0.5B shapes as %
// of the measured read bandwidth, GEMM GOPS at 512 tokens as % of the measured int8 peak, and a
// decode estimate for a Q4_K_M-like layer stack. Usage:
//   kernel_bench [--threads N] [--isa scalar|avx2|avx512] [--quick] [--types q8_0,q5_0,...]
//                [--cputime]   (time on the thread's CPU clock; with --threads 1 this measures the
//                               kernel, not the scheduler, on a machine shared with other work)
//                [--best]      (fastest run instead of the median: kernel A/B on a noisy VM)
//                [--gemm [--tokens 8,16,32,64,512]]   GEMM GOPS per token count instead: the
//                  batched-decode and prefill shapes (gate/up concatenated), weights rotated over
//                  1 GiB of copies (--quick: 256 MiB) for <= 64 tokens so they stream as in decode;
//                  with AMX usable, each point is measured with and without it in the same run.
//                [--gemm-from N]  take the GEMM path from N tokens instead of the ISA's threshold
//                  (GEMV vs GEMM at the same token count)
//                [--hot]  --gemm without the rotation: the weights stay in cache, so a kernel's
//                  compute rate shows apart from how well it overlaps the memory stream
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/acts.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/packed.h"
#include "quant/types.h"
#include "runtime/cpu_features.h"
#include "runtime/huge_page_allocator.h"
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
bool g_best = false;      // --best: fastest run instead of the median (filters out preemption and
                          // co-tenant bursts on a shared VM when comparing kernel variants)
bool g_hot = false;       // --hot: --gemm weights not rotated over copies (stay in cache)

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
  return g_best ? *std::min_element(t.begin(), t.end()) : Median(t);
}

std::vector<GgmlType> ParseTypes(const std::string& arg) {
  std::vector<GgmlType> types;
  for (size_t p = 0; p < arg.size();) {
    size_t e = arg.find(',', p);
    if (e == std::string::npos) e = arg.size();
    GgmlType t;
    if (ParseTypeName(arg.substr(p, e - p), &t)) types.push_back(t);
    p = e + 1;
  }
  return types;
}

// --gemm: GOPS of the many-token path per token count at the shapes batched decode and prefill
// run. Small token counts rotate over enough weight copies to stream from DRAM (as a decode step
// does: the whole model does not fit the cache); "GB/s" is the weight stream rate it implies.
int GemmTable(ThreadPool& pool, const std::string& types_arg, const std::vector<int>& tokens,
              bool quick) {
  constexpr int64_t kGateUpRows = 9728;  // gate and up of the 0.5B, packed as the model does
  const double budget = quick ? 0.15 : 0.5;
  const bool amx = AmxEnabled();
  std::printf("brisk kernel_bench --gemm %s | %s | threads %d | ISA %s | gemm from %d tokens\n",
              BRISK_VERSION, DescribeCpu().c_str(), pool.size(),
              std::string(IsaName(ActiveIsa())).c_str(), GemmMinTokens());
  const Shape shapes[] = {{"attn_q/o 896x896", 896, 896},
                          {"attn_k/v 128x896", 128, 896},
                          {"gate+up 9728x896", kGateUpRows, 896},
                          {"ffn_down 896x4864", 896, 4864}};
  int max_tokens = 1;
  for (int n : tokens) max_tokens = std::max(max_tokens, n);
  const int64_t kMaxCols = 4864;
  std::vector<float> x(size_t(max_tokens) * kMaxCols);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  for (auto& v : x) v = nd(rng);
  HugeVector<float> y(size_t(max_tokens) * 9728);  // like FastForward's outputs (huge pages)
  MatmulWorkspace ws(kMaxCols, pool.size());
  Q8ActsBuffer qb(max_tokens, kMaxCols);
  const bool wide = WidePathAvailable();
  Bf16Acts xb(max_tokens, kMaxCols);
  std::vector<float> ff(size_t(max_tokens) * kGateUpRows / 2);  // gate+up: the SwiGLU outputs
  std::printf("%-6s %-20s %6s %9s %8s %8s", "type", "shape", "tokens", "ms", "GOPS", "GB/s");
  if (amx) std::printf(" %9s %8s", "noAMX ms", "GOPS");
  if (wide) std::printf(" %9s %8s", "wide ms", "GOPS");
  // gate+up where the fused integer kernel runs: Matmul + the SiLU pass (as the forward runs them
  // unfused) against MatmulGlu.
  std::printf(" %9s %9s", "+silu ms", "glu ms");
  std::printf("\n");
  for (GgmlType type : ParseTypes(types_arg)) {
    const int bs = GetTypeTraits(type).block_size;
    for (const Shape& s : shapes) {
      if (s.cols % bs) continue;
      // --quick: 256 MiB (about the L3 of the development VM; still far beyond L2).
      const size_t one = RowBytes(type, s.cols) * size_t(s.rows);
      const size_t stream = quick ? size_t(256) << 20 : size_t(1) << 30;
      const int copies = int(std::min<size_t>(4096, std::max<size_t>(1, (stream + one - 1) / one)));
      std::vector<PackedWeights> pw;
      {
        const auto w = RandomWeights(type, s.rows, s.cols, 3);
        // gate+up as the model packs it: two tensors concatenated (MatmulGlu needs the halves).
        const int64_t half = s.rows / 2;
        const std::vector<WeightSource> halves = {{type, w.data(), half},
                                                  {type, w.data() + w.size() / 2, half}};
        for (int c = 0; c < copies; ++c)
          pw.push_back(s.rows == kGateUpRows ? PackWeightsConcat(halves, s.cols, &pool)
                                             : PackWeights(type, w.data(), s.rows, s.cols, &pool));
      }
      Q8Acts q = qb.view();
      q.cols = s.cols;
      q.meta_stride = s.cols / 32;
      q.qs_stride = (s.cols + 63) / 64 * 64;
      QuantizeActs(x.data(), s.cols, max_tokens, &q);
      MatmulInput in;
      in.q = &q;
      in.x = x.data();
      in.ldx = s.cols;
      ToBf16Tiles(x.data(), s.cols, max_tokens, s.cols, &xb, 0);
      for (int n : tokens) {
        // Rotate over copies while one pass over them takes well under the budget.
        const int use = n <= 64 && !g_hot ? copies : 1;
        auto time_once = [&] {
          return TimeIt(
                     [&] {
                       for (int c = 0; c < use; ++c)
                         Matmul(pool, pw[c], in, n, y.data(), s.rows, ws);
                     },
                     budget) /
                 use;
        };
        const double t = time_once();
        const double ops = 2.0 * double(s.rows) * double(s.cols) * n;
        std::printf("%-6s %-20s %6d %9.3f %8.0f %8.1f", std::string(TypeName(type)).c_str(), s.name,
                    n, t * 1e3, ops / t / 1e9, double(pw[0].bytes) / t / 1e9);
        if (amx) {
          SetAmxForTesting(false);
          const double t2 = time_once();
          SetAmxForTesting(true);
          std::printf(" %9.3f %8.0f", t2 * 1e3, ops / t2 / 1e9);
        }
        if (wide) {  // the same tokens in the prefill class (bf16 AMX path)
          in.xb = &xb;
          in.n_wide = n;
          const double t3 = time_once();
          in.n_wide = 0;
          std::printf(" %9.3f %8.0f", t3 * 1e3, ops / t3 / 1e9);
        }
        if (s.rows == kGateUpRows && IntGluSupported(pw[0], n)) {
          const int64_t half = s.rows / 2;
          auto time_glu = [&](bool fused) {
            return TimeIt(
                       [&] {
                         for (int c = 0; c < use; ++c) {
                           if (fused) {
                             MatmulGlu(pool, pw[c], in, n, ff.data(), half, ws);
                             continue;
                           }
                           Matmul(pool, pw[c], in, n, y.data(), s.rows, ws);
                           pool.ParallelFor(n, 4, [&](int64_t t0, int64_t t1, int) {
                             for (int64_t t = t0; t < t1; ++t)
                               SiluMul(&y[size_t(t) * s.rows], &y[size_t(t) * s.rows + half], half,
                                       &ff[size_t(t) * half]);
                           });
                         }
                       },
                       budget) /
                   use;
          };
          const double unfused = time_glu(false), fused = time_glu(true);
          std::printf(" %9.3f %9.3f", unfused * 1e3, fused * 1e3);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  bool quick = false;
  std::string types_arg = "q8_0,q5_0,q4_k,q6_k,q4_0,q4_1,q5_1,q5_k,f16,bf16,f32";
  bool gemm_mode = false, types_given = false;
  std::string tokens_arg = "8,16,32,64,512";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--quick")
      quick = true;
    else if (a == "--cputime")
      g_cpu_time = true;
    else if (a == "--best")
      g_best = true;
    else if (a == "--hot")
      g_hot = true;
    else if (a == "--types" && i + 1 < argc)
      types_arg = argv[++i], types_given = true;
    else if (a == "--gemm")
      gemm_mode = true;
    else if (a == "--tokens" && i + 1 < argc)
      tokens_arg = argv[++i];
    else if (a == "--gemm-from" && i + 1 < argc)
      SetGemmMinTokensForTesting(std::atoi(argv[++i]));
    else if (a == "--isa" && i + 1 < argc) {
      Isa isa;
      if (!ParseIsa(argv[++i], &isa) || !IsaSupported(isa)) {
        std::fprintf(stderr, "unsupported ISA %s\n", argv[i]);
        return 2;
      }
      SetIsaForTesting(isa);
    } else {
      std::fprintf(
          stderr,
          "usage: %s [--threads N] [--isa I] [--quick] [--types a,b] [--cputime] [--best]\n"
          "          [--gemm [--tokens 8,16,...]] [--gemm-from N] [--hot]\n",
          argv[0]);
      return 2;
    }
  }
  const std::vector<GgmlType> types = ParseTypes(types_arg);
  ThreadPool pool(threads);
  if (gemm_mode) {
    std::vector<int> tokens;
    for (size_t p = 0; p < tokens_arg.size();) {
      size_t e = tokens_arg.find(',', p);
      if (e == std::string::npos) e = tokens_arg.size();
      const int n = std::atoi(tokens_arg.substr(p, e - p).c_str());
      if (n > 0) tokens.push_back(n);
      p = e + 1;
    }
    if (!types_given) types_arg = "q5_0,q8_0,q4_k,q6_k";  // the integer types of real models
    return GemmTable(pool, types_arg, tokens, quick);
  }
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
