// The wide (prefill) matmul path (matmul.h, numerics classes): AMX-BF16 results against a float64
// dot of the bf16-rounded dequantised weights and activations, for every integer weight type and
// shapes that are not multiples of the 16-row group or the 32-token tile pair; and the class
// contract: a token's result never depends on the other tokens of the call.
#include <algorithm>

#include "kernel_test_util.h"
#include "kernels/cpu/elementwise.h"

namespace brisk::test {
namespace {

const GgmlType kIntTypes[] = {GgmlType::kQ4_0,   GgmlType::kQ4_1,  GgmlType::kQ5_0, GgmlType::kQ5_1,
                              GgmlType::kQ8_0,   GgmlType::kQ4_K,  GgmlType::kQ5_K, GgmlType::kQ6_K,
                              GgmlType::kIQ4_NL, GgmlType::kIQ4_XS};

float FromBf16(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// bf16 rounding of each value (scalar conversion, 32 at a time through a one-token buffer).
std::vector<float> Bf16Round(const std::vector<float>& v) {
  Bf16Acts one(1, 32);
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); i += 32) {
    ToBf16Tiles(&v[i], 32, 1, 32, &one, 0, Isa::kScalar);
    for (int j = 0; j < 32; ++j) out[i + j] = FromBf16(one.data()[j]);
  }
  return out;
}

struct WideCase {
  const PackedWeights* pw;
  const std::vector<float>* x;
  int n_tokens;
  int n_wide;  // the last n_wide tokens
};

// y of a call whose last n_wide tokens are wide (bf16 rows converted here, as FastForward does).
std::vector<float> RunCall(ThreadPool& pool, const WideCase& c) {
  const PackedWeights& pw = *c.pw;
  Q8ActsBuffer qb(c.n_tokens, pw.cols);
  QuantizeActs(c.x->data(), pw.cols, c.n_tokens, &qb.view(), Isa::kAvx512);
  Bf16Acts xb(std::max(1, c.n_wide), pw.cols);
  const int n0 = c.n_tokens - c.n_wide;
  ToBf16Tiles(c.x->data() + size_t(n0) * pw.cols, pw.cols, c.n_wide, pw.cols, &xb, 0, Isa::kAvx512);
  MatmulWorkspace ws(pw.cols, pool.size());
  MatmulInput in;
  in.q = &qb.view();
  in.x = c.x->data();
  in.ldx = pw.cols;
  in.xb = &xb;
  in.n_wide = c.n_wide;
  std::vector<float> y(size_t(c.n_tokens) * size_t(pw.rows), -12345.0f);
  Matmul(pool, pw, in, c.n_tokens, y.data(), pw.rows, ws, Isa::kAvx512);
  return y;
}

void CheckWide(ThreadPool& pool, GgmlType type, int64_t rows, int64_t cols, int n_tokens,
               uint32_t seed) {
  SCOPED_TRACE(std::string(TypeName(type)) + " rows " + std::to_string(rows) + " cols " +
               std::to_string(cols) + " tokens " + std::to_string(n_tokens));
  const std::vector<uint8_t> w = RandomWeights(type, rows, cols, seed);
  const std::vector<float> x = RandomActs(n_tokens, cols, seed + 1);
  const PackedWeights pw = PackWeights(type, w.data(), rows, cols, &pool);
  const std::vector<float> wf = DequantizeAll(type, w, rows, cols);
  const std::vector<float> y = RunCall(pool, {&pw, &x, n_tokens, n_tokens});
  const std::vector<float> wb = Bf16Round(wf), xb = Bf16Round(x);
  int bad = 0;
  for (int t = 0; t < n_tokens && bad < 5; ++t)
    for (int64_t r = 0; r < rows && bad < 5; ++r) {
      double exact = 0, mag = 0;
      for (int64_t i = 0; i < cols; ++i) {
        const double p = double(wb[size_t(r) * cols + i]) * double(xb[size_t(t) * cols + i]);
        exact += p;
        mag += std::fabs(p);
      }
      // fp32 accumulation, plus a bf16 ulp where the kernel's fp32 dequantisation rounds a
      // weight differently from the format's reference dequantisation (K types).
      const double tol = 1e-5 * mag + 1e-6;
      const double got = y[size_t(t) * rows + r];
      if (!(std::fabs(got - exact) <= tol)) {
        ADD_FAILURE() << "row " << r << " token " << t << ": got " << got << " exact " << exact
                      << " (tol " << tol << ")";
        ++bad;
      }
    }
  // Class contract: the same tokens with narrow tokens in front, and alone one at a time, give
  // the same bits for the wide tokens; the narrow tokens those of an all-narrow call.
  const int lead = std::min(3, n_tokens);
  std::vector<float> x2(size_t(lead) * cols);
  std::copy(x.begin(), x.begin() + size_t(lead) * cols, x2.begin());
  x2.insert(x2.end(), x.begin(), x.end());
  const std::vector<float> y2 = RunCall(pool, {&pw, &x2, lead + n_tokens, n_tokens});
  const std::vector<float> narrow = RunCall(pool, {&pw, &x2, lead, 0});
  for (int t = 0; t < lead; ++t)
    for (int64_t r = 0; r < rows; ++r)
      ASSERT_EQ(y2[size_t(t) * rows + r], narrow[size_t(t) * rows + r])
          << "narrow token " << t << " row " << r;
  for (int t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r)
      ASSERT_EQ(y2[size_t(lead + t) * rows + r], y[size_t(t) * rows + r])
          << "wide token " << t << " row " << r << " with narrow tokens in front";
  const int probe = n_tokens - 1;  // last token alone (other tile positions, no neighbours)
  std::vector<float> x1(x.begin() + size_t(probe) * cols, x.begin() + size_t(probe + 1) * cols);
  const std::vector<float> y1 = RunCall(pool, {&pw, &x1, 1, 1});
  for (int64_t r = 0; r < rows; ++r)
    ASSERT_EQ(y1[size_t(r)], y[size_t(probe) * rows + r]) << "token alone, row " << r;
}

class WideTypes : public ::testing::TestWithParam<GgmlType> {};

TEST_P(WideTypes, MatchesBf16ReferenceAndKeepsTheClassContract) {
  if (!WidePathAvailable(Isa::kAvx512))
    GTEST_SKIP() << "no AMX-BF16 on this CPU: wide tokens take the integer path (tested there)";
  ThreadPool pool(2);
  const int bs = GetTypeTraits(GetParam()).block_size;
  struct Shape {
    int64_t rows, cols;
    int n;
  };
  std::vector<Shape> shapes = {{37, 512, 9}, {130, 256, 33}, {48, 896, 70}, {896, 4864, 40}};
  if (SmallTests()) shapes = {{37, 512, 9}, {130, 256, 33}};
  uint32_t seed = 900;
  for (const Shape& s : shapes)
    if (s.cols % bs == 0) CheckWide(pool, GetParam(), s.rows, s.cols, s.n, seed += 11);
}

INSTANTIATE_TEST_SUITE_P(IntTypes, WideTypes, ::testing::ValuesIn(kIntTypes),
                         [](const auto& info) { return std::string(TypeName(info.param)); });

// The fused gate/up + SwiGLU entry gives the same bf16 bits as the wide matmul into fp32, then
// SiluMul, then the bf16 conversion, for every token (ragged token counts) and column.
TEST_P(WideTypes, FusedGluEqualsMatmulThenSiluThenBf16) {
  if (!WidePathAvailable(Isa::kAvx512)) GTEST_SKIP() << "no AMX-BF16 on this CPU";
  ThreadPool pool(2);
  const GgmlType type = GetParam();
  const int64_t cols = GetTypeTraits(type).block_size == 256 ? 512 : 896, rows = 96;
  for (int n : {1, 37, 70}) {
    SCOPED_TRACE("tokens " + std::to_string(n));
    const auto wg = RandomWeights(type, rows, cols, 31 + n),
               wu = RandomWeights(type, rows, cols, 57);
    const PackedWeights pw =
        PackWeightsConcat({{type, wg.data(), rows}, {type, wu.data(), rows}}, cols, &pool);
    ASSERT_TRUE(GluWideSupported(pw, Isa::kAvx512));
    std::vector<float> x = RandomActs(n, cols, 5 + n);
    for (float& v : x) v *= 4.0f;  // gate values well into both tails of the SiLU
    const std::vector<float> y = RunCall(pool, {&pw, &x, n, n});
    std::vector<float> h(size_t(n) * rows);
    for (int t = 0; t < n; ++t)
      SiluMul(&y[size_t(t) * 2 * rows], &y[size_t(t) * 2 * rows + rows], rows, &h[size_t(t) * rows],
              Isa::kAvx512);
    Bf16Acts want(n, rows), got(n, rows), xb(n, cols);
    ToBf16Tiles(h.data(), rows, n, rows, &want, 0, Isa::kAvx512);
    ToBf16Tiles(x.data(), cols, n, cols, &xb, 0, Isa::kAvx512);
    MatmulWorkspace ws(cols, pool.size());
    MatmulGluWide(pool, pw, xb, n, &got, ws, Isa::kAvx512);
    const size_t values = size_t((n + 15) / 16) * 16 * rows;  // whole tiles (padding rows: 0)
    for (size_t i = 0; i < values; ++i)
      ASSERT_EQ(got.data()[i], want.data()[i]) << "value " << i << " (tile order)";
  }
}

TEST(Bf16Rows, RoundToNearestEvenOnEveryIsa) {
  const float v[] = {1.0f,
                     1.00390625f,
                     1.01171875f,
                     -3.5f,
                     1e-40f,
                     -1e-40f,
                     65504.0f,
                     3.3895e38f,
                     0.0f,
                     -0.0f,
                     1.0f + 1.0f / 256 + 1.0f / 65536};
  // Expected bf16: ties to even (1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6), above a tie up,
  // denormals to signed zero.
  const uint16_t want[] = {0x3F80, 0x3F80, 0x3F82, 0xC060, 0x0000, 0x8000,
                           0x4780, 0x7F7F, 0x0000, 0x8000, 0x3F81};
  const int n = int(sizeof(v) / sizeof(v[0]));
  std::vector<float> row(64, 0.5f);  // two blocks: the second lands 512 values on (tile order)
  for (int i = 0; i < n; ++i) row[40 + i] = v[i];
  for (Isa isa : TestIsas()) {
    Bf16Acts out(20, 64);
    ToBf16Tiles(row.data(), 64, 1, 64, &out, 17, isa);  // token 17: tile 1, row 1
    const uint16_t* t = out.data() + (1 * 2 * 512) + 1 * 32;
    EXPECT_EQ(t[0], 0x3F00) << IsaName(isa);  // 0.5, block 0
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(t[512 + 8 + i], want[i]) << IsaName(isa) << " value " << v[i];
  }
}

}  // namespace
}  // namespace brisk::test
