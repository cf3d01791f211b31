// Fuzz-style robustness: mutations of a valid small file (random byte flips, truncations,
// insertions/deletions, and "interesting" values written into structural fields) must never
// crash the reader: Open either succeeds, with everything it returns inside the file, or
// returns an error. Seeded deterministically; a few thousand opens, well under 2 s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gguf_test_util.h"

namespace brisk::gguf_test {
namespace {

using gguf::File;

// Uses everything an opened file hands out; returns a checksum so nothing is optimized away.
uint64_t Exercise(const File& f) {
  uint64_t sum = 0;
  for (const auto& [key, v] : f.metadata()) {
    sum += key.size() + v.ToString().size();
    for (char c : v.str) sum += uint8_t(c);
    EXPECT_LE(v.raw_bytes, f.file_size());
    (void)f.GetString(key);
    (void)f.GetUInt(key);
    (void)f.GetInt(key);
    (void)f.GetFloat(key);
    (void)f.GetBool(key);
    if (v.type != ValueType::kArray) continue;
    EXPECT_LE(v.items_bytes, f.file_size());
    if (v.elem_type == ValueType::kString) {
      auto a = f.GetStringArray(key);
      EXPECT_TRUE(a.ok()) << a.message();
      if (a.ok())
        for (std::string_view s : *a)
          for (char c : s) sum += uint8_t(c);
    } else if (auto ints = f.GetIntArray(key); ints.ok()) {
      for (int64_t x : *ints) sum += uint64_t(x);
    } else if (auto fl = f.GetFloatArray(key); fl.ok()) {
      sum += fl->size();
    }
  }
  for (const gguf::TensorInfo& t : f.tensors()) {
    EXPECT_LE(f.data_offset() + t.offset, f.file_size());
    EXPECT_LE(t.nbytes, f.file_size() - f.data_offset() - t.offset);
    EXPECT_EQ(t.nbytes, RowBytes(t.type, t.ne[0]) * uint64_t(t.rows()));
    for (uint64_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
  }
  return sum;
}

// clang-format off
constexpr uint64_t kInteresting64[] = {
    0, 1, 2, 3, 4, 8, 31, 32, 33, 64, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF,
    uint64_t(1) << 32, uint64_t(1) << 60, uint64_t(1) << 62, (uint64_t(1) << 62) + 1,
    uint64_t(1) << 63, ~uint64_t(0) - 31, ~uint64_t(0)};
constexpr uint32_t kInteresting32[] = {
    0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 14, 15, 30, 31, 32, 99,
    0xFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};
// clang-format on

struct Field {
  size_t off;
  int width;  // 4 or 8
};

// The structural fields of a well-formed file: counts, lengths, type tags, dims, offsets.
std::vector<Field> StructuralFields(const std::vector<uint8_t>& b, const Layout& L) {
  std::vector<Field> out = {{kVersionOff, 4}, {kTensorCountOff, 8}, {kKvCountOff, 8}};
  for (const KvField& k : L.kvs) {
    out.push_back({k.key_off, 8});
    out.push_back({k.type_off, 4});
    if (k.type == uint32_t(ValueType::kString)) out.push_back({k.value_off, 8});
    if (k.type == uint32_t(ValueType::kU32)) out.push_back({k.value_off, 4});
    if (k.type == uint32_t(ValueType::kArray)) {
      out.push_back({k.value_off, 4});      // element type
      out.push_back({k.value_off + 4, 8});  // count
      // The length of each string element.
      if (Peek<uint32_t>(b, k.value_off) == uint32_t(ValueType::kString)) {
        size_t pos = k.value_off + 12;
        for (uint64_t n = Peek<uint64_t>(b, k.value_off + 4); n > 0; --n) {
          out.push_back({pos, 8});
          pos += 8 + size_t(Peek<uint64_t>(b, pos));
        }
      }
    }
  }
  for (const TensorField& t : L.tensors) {
    out.push_back({t.name_off, 8});
    out.push_back({t.ndims_off, 4});
    for (uint32_t d = 0; d < t.n_dims; ++d) out.push_back({t.ne_off + 8 * d, 8});
    out.push_back({t.type_off, 4});
    out.push_back({t.offset_off, 8});
  }
  return out;
}

class GgufFuzz : public GgufFileTest {
 protected:
  // Opens a mutated file; returns whether it opened.
  bool Try(const std::vector<uint8_t>& b, uint64_t* checksum) {
    auto f = OpenBytes(b);  // also parses an exact-size heap copy (see OpenBytes)
    if (!f.ok()) {
      EXPECT_NE(f.message().find("GGUF: "), std::string::npos) << f.message();
      return false;
    }
    *checksum += Exercise(*f);
    return true;
  }
};

TEST_F(GgufFuzz, RandomMutationsNeverCrash) {
  const std::vector<uint8_t> valid = SmallValidFile();
  const Layout L = Scan(valid);
  ASSERT_TRUE(L.ok);
  const std::vector<Field> fields = StructuralFields(valid, L);
  std::mt19937_64 rng(0x6775'6766'0001ull);
  auto below = [&](size_t n) { return size_t(rng() % n); };

  const auto t0 = std::chrono::steady_clock::now();
  int ok = 0, failed = 0;
  uint64_t checksum = 0;
  constexpr int kIterations = 2000;
  for (int it = 0; it < kIterations; ++it) {
    std::vector<uint8_t> b = valid;
    switch (it % 5) {
      case 0: {  // flip 1..4 random bytes anywhere
        for (size_t n = 1 + below(4); n > 0; --n) b[below(b.size())] ^= uint8_t(1 + below(255));
        break;
      }
      case 1:  // truncate
        b.resize(below(b.size()));
        break;
      case 2: {  // an interesting value in a structural field
        const Field& fl = fields[below(fields.size())];
        if (fl.width == 8)
          Poke<uint64_t>(&b, fl.off, kInteresting64[below(std::size(kInteresting64))]);
        else
          Poke<uint32_t>(&b, fl.off, kInteresting32[below(std::size(kInteresting32))]);
        break;
      }
      case 3: {  // flip bytes within the header and metadata, then maybe truncate
        for (size_t n = 1 + below(3); n > 0; --n) b[below(L.infos_end)] ^= uint8_t(1 << below(8));
        if (below(2)) b.resize(L.infos_end + below(b.size() - L.infos_end));
        break;
      }
      case 4: {  // insert or delete a few bytes, shifting everything after
        const size_t pos = below(b.size());
        const size_t n = 1 + below(8);
        if (below(2)) {
          b.erase(b.begin() + ptrdiff_t(pos), b.begin() + ptrdiff_t(std::min(b.size(), pos + n)));
        } else {
          std::vector<uint8_t> ins(n);
          for (uint8_t& x : ins) x = uint8_t(rng());
          b.insert(b.begin() + ptrdiff_t(pos), ins.begin(), ins.end());
        }
        break;
      }
    }
    (Try(b, &checksum) ? ok : failed)++;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ info ] %d mutated files: %d opened, %d rejected, %.1f ms (checksum %llx)\n",
              kIterations, ok, failed, ms, static_cast<unsigned long long>(checksum));
  EXPECT_GT(failed, kIterations / 4);  // the mutations do reach the checks
  EXPECT_GT(ok, 0);                    // and some are harmless (flips inside tensor data)
}

// Every single byte of the header, metadata and tensor infos set to 0x00, 0xFF and with its top
// bit flipped: exhaustive for one-byte damage.
TEST_F(GgufFuzz, EveryHeaderByteDamaged) {
  const std::vector<uint8_t> valid = SmallValidFile();
  const Layout L = Scan(valid);
  ASSERT_TRUE(L.ok);
  uint64_t checksum = 0;
  int failed = 0;
  for (size_t i = 0; i < L.data_off; ++i) {
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<uint8_t> b = valid;
      b[i] = mode == 0 ? 0x00 : mode == 1 ? 0xFF : uint8_t(b[i] ^ 0x80);
      if (b == valid) continue;
      failed += Try(b, &checksum) ? 0 : 1;
    }
  }
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace brisk::gguf_test
