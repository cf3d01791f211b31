// Dequantization: hand-built blocks checked against the layout facts of DESIGN §4 (written here
// as per-value index formulas, independently of the implementation's loops), and bit-exact
// agreement with the reference dequantizer on every golden file.
#include "quant/dequantize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "quant/blocks.h"
#include "quant/types.h"
#include "quant_test_util.h"
#include "test_paths.h"
#include "util/fp16.h"

namespace brisk {
namespace {

// Little helper to lay out a block byte by byte at explicit offsets.
struct Bytes {
  std::vector<uint8_t> b;
  explicit Bytes(size_t n) : b(n, 0) {}
  void F16(size_t off, float v) {
    const uint16_t h = Fp32ToFp16(v);
    b[off] = uint8_t(h & 0xff);
    b[off + 1] = uint8_t(h >> 8);
  }
};

std::vector<float> Deq(GgmlType t, const Bytes& bytes, int64_t n) {
  EXPECT_EQ(RowBytes(t, n), bytes.b.size());
  std::vector<float> y(static_cast<size_t>(n));
  DequantizeRow(t, bytes.b.data(), y.data(), n);
  return y;
}

TEST(DequantizeHandMade, Q8_0) {
  Bytes blk(34);
  blk.F16(0, 0.5f);
  for (int i = 0; i < 32; ++i) blk.b[2 + i] = uint8_t(int8_t(i * 8 - 128));
  auto y = Deq(GgmlType::kQ8_0, blk, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 0.5f * float(i * 8 - 128)) << i;
}

TEST(DequantizeHandMade, Q4_0AndQ4_1) {
  Bytes b0(18), b1(20);
  b0.F16(0, 0.25f);
  b1.F16(0, 0.5f);
  b1.F16(2, -1.0f);
  for (int l = 0; l < 16; ++l) {
    b0.b[2 + l] = uint8_t(l | (15 - l) << 4);
    b1.b[4 + l] = uint8_t(l | (15 - l) << 4);
  }
  auto y0 = Deq(GgmlType::kQ4_0, b0, 32);
  auto y1 = Deq(GgmlType::kQ4_1, b1, 32);
  for (int i = 0; i < 32; ++i) {
    const int q = i < 16 ? i : 15 - (i - 16);
    EXPECT_EQ(y0[i], 0.25f * float(q - 8)) << i;
    EXPECT_EQ(y1[i], 0.5f * float(q) - 1.0f) << i;
  }
}

TEST(DequantizeHandMade, Q5_0AndQ5_1) {
  Bytes b0(22), b1(24);
  b0.F16(0, 1.0f);
  b1.F16(0, 2.0f);
  b1.F16(2, 3.0f);
  const uint32_t qh = 0xA5C3F00Fu;
  for (int k = 0; k < 4; ++k) b0.b[2 + k] = b1.b[4 + k] = uint8_t(qh >> (8 * k));
  for (int l = 0; l < 16; ++l) b0.b[6 + l] = b1.b[8 + l] = uint8_t(l | ((l * 7) & 15) << 4);
  auto y0 = Deq(GgmlType::kQ5_0, b0, 32);
  auto y1 = Deq(GgmlType::kQ5_1, b1, 32);
  for (int i = 0; i < 32; ++i) {
    const int low = i < 16 ? i : ((i - 16) * 7) & 15;
    const int q = low | int((qh >> i) & 1) << 4;
    EXPECT_EQ(y0[i], float(q - 16)) << i;
    EXPECT_EQ(y1[i], 2.0f * float(q) + 3.0f) << i;
  }
}

// Q4_K / Q5_K 6-bit scale packing, written from the DESIGN formula (unpacking direction).
void ScaleMin(const uint8_t* s, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
    *m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

TEST(DequantizeHandMade, Q4_KAndQ5_K) {
  Bytes b4(144), b5(176);
  for (Bytes* b : {&b4, &b5}) {
    b->F16(0, 0.125f);
    b->F16(2, 0.0625f);
    for (int k = 0; k < 12; ++k) b->b[4 + k] = uint8_t(37 * k + 11);  // exercise all bits
  }
  for (int k = 0; k < 128; ++k) b4.b[16 + k] = b5.b[48 + k] = uint8_t(k * 13 + 5);
  for (int k = 0; k < 32; ++k) b5.b[16 + k] = uint8_t(k * 29 + 3);
  auto y4 = Deq(GgmlType::kQ4_K, b4, 256);
  auto y5 = Deq(GgmlType::kQ5_K, b5, 256);
  for (int v = 0; v < 256; ++v) {
    const int c = v / 64, l = v % 32, high = (v % 64) / 32, j = v / 32;
    int sc, m;
    ScaleMin(&b4.b[4], j, &sc, &m);
    const uint8_t byte = b4.b[16 + 32 * c + l];
    const int q = high ? byte >> 4 : byte & 15;
    EXPECT_EQ(y4[v], (0.125f * float(sc)) * float(q) - 0.0625f * float(m)) << v;
    const int q5 = q + (((b5.b[16 + l] >> (2 * c + high)) & 1) << 4);
    EXPECT_EQ(y5[v], (0.125f * float(sc)) * float(q5) - 0.0625f * float(m)) << v;
  }
}

TEST(DequantizeHandMade, Q6_K) {
  Bytes b(210);
  for (int k = 0; k < 128; ++k) b.b[k] = uint8_t(k * 11 + 1);
  for (int k = 0; k < 64; ++k) b.b[128 + k] = uint8_t(k * 23 + 7);
  for (int k = 0; k < 16; ++k) b.b[192 + k] = uint8_t(int8_t(k * 17 - 120));
  b.F16(208, 0.03125f);
  auto y = Deq(GgmlType::kQ6_K, b, 256);
  for (int v = 0; v < 256; ++v) {
    const int half = v / 128, r = v % 128, quarter = r / 32, l = r % 32;
    const uint8_t ql = b.b[64 * half + l + (quarter & 1) * 32];
    const int low = quarter < 2 ? ql & 15 : ql >> 4;
    const int high = (b.b[128 + 32 * half + l] >> (2 * quarter)) & 3;
    const int sc = int8_t(b.b[192 + v / 16]);
    EXPECT_EQ(y[v], (0.03125f * float(sc)) * float((low | high << 4) - 32)) << v;
  }
}

TEST(DequantizeHandMade, Q2_KAndQ3_K) {
  Bytes b2(84), b3(110);
  for (int k = 0; k < 16; ++k) b2.b[k] = uint8_t(k * 37 + 9);
  for (int k = 0; k < 64; ++k) b2.b[16 + k] = b3.b[32 + k] = uint8_t(k * 53 + 17);
  b2.F16(80, 0.5f);
  b2.F16(82, 0.25f);
  for (int k = 0; k < 32; ++k) b3.b[k] = uint8_t(k * 41 + 3);
  for (int k = 0; k < 12; ++k) b3.b[96 + k] = uint8_t(k * 59 + 21);
  b3.F16(108, 0.75f);
  auto y2 = Deq(GgmlType::kQ2_K, b2, 256);
  auto y3 = Deq(GgmlType::kQ3_K, b3, 256);
  for (int v = 0; v < 256; ++v) {
    // Value v: half v/128, 2-bit plane (v%128)/32, byte 16*((v%32)/16) + v%16 of the half.
    const int half = v / 128, plane = (v % 128) / 32, idx = v % 32, j = v / 16;
    const int q2 = (b2.b[16 + 32 * half + idx] >> (2 * plane)) & 3;
    const uint8_t s = b2.b[j];
    EXPECT_EQ(y2[v], (0.5f * float(s & 15)) * float(q2) - 0.25f * float(s >> 4)) << v;
    // Q3_K scale j: low nibble from byte j%8 (high nibble when j >= 8), 2 high bits from byte
    // 8 + j%4 at bit 2*(j/4); biased by 32. The hmask bit 4*half+plane of byte idx set = no -4.
    const int low = (j < 8 ? b3.b[96 + j] : b3.b[96 + j - 8] >> 4) & 15;
    const int hi = (b3.b[96 + 8 + j % 4] >> (2 * (j / 4))) & 3;
    const int sc = (low | hi << 4) - 32;
    const int q3 = ((b3.b[32 + 32 * half + idx] >> (2 * plane)) & 3) -
                   ((b3.b[idx] >> (4 * half + plane)) & 1 ? 0 : 4);
    EXPECT_EQ(y3[v], (0.75f * float(sc)) * float(q3)) << v;
  }
}

// IQ4_NL: value i = d * codebook[index i], indices as Q4_0's nibbles.
TEST(DequantizeHandMade, IQ4_NL) {
  Bytes b(18);
  b.F16(0, 0.5f);
  for (int i = 0; i < 16; ++i) b.b[2 + i] = uint8_t(i | (15 - i) << 4);
  auto y = Deq(GgmlType::kIQ4_NL, b, 32);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(y[i], 0.5f * float(kIQ4NLValues[i])) << i;
    EXPECT_EQ(y[16 + i], 0.5f * float(kIQ4NLValues[15 - i])) << i;
  }
  EXPECT_EQ(y[0], -63.5f);  // the codebook's ends, written out: -127 and 113
  EXPECT_EQ(y[16], 56.5f);
}

// IQ4_XS: d (2 bytes), scales_h (2), scales_l (4), qs (128); sub-block j's multiplier is its
// 6-bit scale minus 32, the 6 bits being scales_l's nibble j (low nibble first) and bits 2j..2j+1
// of scales_h above them.
TEST(DequantizeHandMade, IQ4_XS) {
  Bytes b(136);
  b.F16(0, 0.25f);
  const int ls[8] = {0, 63, 32, 33, 17, 48, 5, 40};  // multipliers -32, 31, 0, 1, ...
  uint16_t sh = 0;
  for (int j = 0; j < 8; ++j) {
    b.b[4 + j / 2] = uint8_t(b.b[4 + j / 2] | (ls[j] & 15) << (4 * (j % 2)));
    sh = uint16_t(sh | (ls[j] >> 4) << (2 * j));
  }
  b.b[2] = uint8_t(sh & 0xff), b.b[3] = uint8_t(sh >> 8);
  for (int k = 0; k < 128; ++k) b.b[8 + k] = uint8_t(((k * 7) & 15) | ((k * 3 + 1) & 15) << 4);
  auto y = Deq(GgmlType::kIQ4_XS, b, 256);
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 16; ++i) {
      const int k = 16 * j + i;
      const float dl = 0.25f * float(ls[j] - 32);
      EXPECT_EQ(y[32 * j + i], dl * float(kIQ4NLValues[(k * 7) & 15])) << j << " " << i;
      EXPECT_EQ(y[32 * j + 16 + i], dl * float(kIQ4NLValues[(k * 3 + 1) & 15])) << j << " " << i;
    }
  EXPECT_EQ(y[0], 0.25f * -32 * -127);
}

TEST(DequantizeHandMade, FloatTypes) {
  const float x[4] = {1.0f, -2.5f, 65504.0f, 1e-7f};
  std::vector<float> y(4);
  DequantizeRow(GgmlType::kF32, x, y.data(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(test::SameBits(x[i], y[i]));
  const uint16_t h[3] = {0x3C00, 0xC100, 0x0001};  // 1, -2.5, smallest subnormal 2^-24
  DequantizeRow(GgmlType::kF16, h, y.data(), 3);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.5f);
  EXPECT_EQ(y[2], std::ldexp(1.0f, -24));
  const uint16_t bf[2] = {0x3F80, 0xC020};  // 1, -2.5
  DequantizeRow(GgmlType::kBF16, bf, y.data(), 2);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.5f);
}

TEST(DequantizeHandMade, UnalignedSourceIsFine) {
  // A row may start at an odd address inside a mapping; the result must not depend on it.
  std::vector<uint8_t> raw(1 + 2 * 22);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = uint8_t(i * 31 + 7);
  raw[1] = 0x00;
  raw[2] = 0x3C;  // d = 1 for block 0
  std::vector<uint8_t> aligned(raw.begin() + 1, raw.end());
  std::vector<float> a(64), b(64);
  DequantizeRow(GgmlType::kQ5_0, raw.data() + 1, a.data(), 64);
  DequantizeRow(GgmlType::kQ5_0, aligned.data(), b.data(), 64);
  for (int i = 0; i < 64; ++i) EXPECT_TRUE(test::SameBits(a[i], b[i])) << i;
}

// ---- golden ----------------------------------------------------------------------------------

struct GoldenCase {
  std::string file;    // path of the .f32
  std::string model;   // <model>
  std::string tensor;  // <tensor>
  std::string type;    // <TYPE>
};

// Golden files: ../shared/golden/dequant when present, and the committed tests/data/golden/dequant
// (the shared set's subset, skipped where the shared set has the same file, plus the IQ4 files
// only tests/data has).
std::vector<GoldenCase> ListGoldenCases(std::string* dir_out) {
  namespace fs = std::filesystem;
  const std::string shared = test::GoldenPath("dequant"), data = test::DataPath("golden/dequant");
  *dir_out = shared.empty() ? data : shared + " and " + data;
  std::vector<GoldenCase> out;
  std::set<std::string> seen;
  for (const std::string& dir : {shared, data}) {
    if (dir.empty() || !fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.size() < 5 || name.substr(name.size() - 4) != ".f32") continue;
      if (!seen.insert(name).second) continue;
      const std::string stem = name.substr(0, name.size() - 4);
      const size_t first = stem.find('.'), last = stem.rfind('.');
      if (first == std::string::npos || first == last) continue;
      out.push_back({e.path().string(), stem.substr(0, first),
                     stem.substr(first + 1, last - first - 1), stem.substr(last + 1)});
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.file < b.file; });
  return out;
}

TEST(DequantizeGolden, BitExactOnEveryFile) {
  std::string dir;
  const auto cases = ListGoldenCases(&dir);
  if (cases.empty()) GTEST_SKIP() << "no dequant goldens (neither ../shared/golden nor tests/data)";
  std::map<std::string, int> per_type;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string model_path = test::ModelPath(c.model);
    ASSERT_FALSE(model_path.empty()) << "model " << c.model << " not found";
    auto f = gguf::File::Open(model_path);
    ASSERT_TRUE(f.ok()) << f.message();
    const gguf::TensorInfo* t = f->FindTensor(c.tensor);
    ASSERT_NE(t, nullptr) << c.tensor;
    ASSERT_EQ(TypeName(t->type), c.type);

    std::FILE* fp = std::fopen(c.file.c_str(), "rb");
    ASSERT_NE(fp, nullptr);
    std::vector<float> want(size_t(t->n_elements));
    const size_t got_n = std::fread(want.data(), sizeof(float), want.size(), fp);
    std::fclose(fp);
    ASSERT_GT(got_n, 0u);
    ASSERT_EQ(got_n % size_t(GetTypeTraits(t->type).block_size), 0u);
    want.resize(got_n);

    std::vector<float> got(got_n);
    DequantizeRow(t->type, t->data, got.data(), int64_t(got_n));
    size_t mismatches = 0, first = 0;
    for (size_t i = 0; i < got_n; ++i) {
      if (!test::SameBits(got[i], want[i]) && mismatches++ == 0) first = i;
    }
    EXPECT_EQ(mismatches, 0u) << "first at " << first << ": got " << got[first] << " want "
                              << want[first];
    ++per_type[c.type];
  }
  std::printf("[golden dequant] %zu files from %s:", cases.size(), dir.c_str());
  for (const auto& [type, n] : per_type) std::printf(" %s=%d", type.c_str(), n);
  std::printf("\n");
}

}  // namespace
}  // namespace brisk
