// Attention kernel micro-benchmark (run on demand, never as a test): one thread, one KV head
// group of the 0.5B shape (7 query heads, head_dim 64, f16 blocks of 16), contexts of 128..4096
// positions, 1 query token (decode) or 8 (a prefill chunk). Prints the best of several runs as ns
// per (query row x position) and GFLOP/s (2 * head_dim for q.k, 2 * head_dim for e * v).
//   attention_bench [--isa scalar|avx2|avx512] [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "util/fp16.h"

using namespace brisk;

int main(int argc, char** argv) {
  Isa isa = ActiveIsa();
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--isa" && i + 1 < argc) {
      if (!ParseIsa(argv[++i], &isa) || !IsaSupported(isa)) {
        std::fprintf(stderr, "unsupported ISA %s\n", argv[i]);
        return 2;
      }
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--isa scalar|avx2|avx512] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  const int G = 7, hd = 64, bs = 16, max_ctx = 4096 + kAttendMaxTokens;
  const int n_blocks = (max_ctx + bs - 1) / bs;
  const size_t chunk = size_t(bs) * hd * 2;
  std::vector<uint8_t> store(2 * chunk * n_blocks);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (size_t i = 0; i + 1 < store.size(); i += 2) {
    const uint16_t h = Fp32ToFp16(nd(rng));
    std::memcpy(&store[i], &h, 2);
  }
  std::vector<int32_t> table(n_blocks);
  for (int i = 0; i < n_blocks; ++i) table[i] = i;
  std::shuffle(table.begin(), table.end(), rng);
  std::vector<float> q(size_t(kAttendMaxTokens) * G * hd), out(q.size());
  for (float& v : q) v = nd(rng);
  std::vector<float> scratch(AttendScratchFloats(G, hd, bs));
  std::printf("attention_bench | ISA %s | G %d head_dim %d block %d f16 | 1 thread, best of %d\n",
              std::string(IsaName(isa)).c_str(), G, hd, bs, reps);
  std::printf("| context | tokens | ns / row-position | GFLOP/s |\n|--:|--:|--:|--:|\n");
  for (int ctx : {128, 512, 1024, 4096})
    for (int tokens : {1, kAttendMaxTokens}) {
      AttendArgs a;
      a.q = q.data();
      a.q_stride = G * hd;
      a.n_tokens = tokens;
      a.k0 = store.data();
      a.v0 = store.data() + chunk;
      a.block_stride = 2 * chunk;
      a.table = table.data();
      a.block_size = bs;
      a.elem = KvElem::kF16;
      a.n_ctx = ctx;
      a.group = G;
      a.head_dim = hd;
      a.scale = 0.125f;
      a.scratch = scratch.data();
      a.out = out.data();
      a.out_stride = G * hd;
      double row_pos = 0;
      for (int t = 0; t < tokens; ++t) row_pos += double(G) * (ctx + t);
      const int inner = std::max(1, int(4e6 / row_pos));
      double best = 1e30;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < inner; ++k) AttendGroup(a, isa);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::min(best, s / inner);
      }
      std::printf("| %d | %d | %.2f | %.1f |\n", ctx, tokens, best * 1e9 / row_pos,
                  row_pos * 4 * hd / best * 1e-9);
    }
  return 0;
}
