// Malformed GGUF files: a valid small file is serialized and one field is patched (located by
// walking the file, never by a hard-coded offset). Each must be rejected with a Status whose
// message names the problem: no crash, no hang, no huge allocation.
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "gguf_test_util.h"

namespace brisk::gguf_test {
namespace {

using gguf::File;

constexpr uint64_t k2to60 = uint64_t(1) << 60;

class GgufMalformed : public GgufFileTest {
 protected:
  void SetUp() override {
    GgufFileTest::SetUp();
    valid_ = SmallValidFile();
    L_ = Scan(valid_);
    ASSERT_TRUE(L_.ok);
    ASSERT_EQ(L_.tensors.size(), 3u);
    // The untouched file opens: every failure below is due to the patch.
    auto f = OpenBytes(valid_);
    ASSERT_TRUE(f.ok()) << f.message();
  }
  // A copy of the valid file with one field overwritten.
  template <typename T>
  std::vector<uint8_t> Patched(size_t off, T v) const {
    std::vector<uint8_t> b = valid_;
    Poke(&b, off, v);
    return b;
  }
  std::vector<uint8_t> valid_;
  Layout L_;
};

// ---- truncation -------------------------------------------------------------------------------

TEST_F(GgufMalformed, TruncatedAtTwentyThreeOffsets) {
  const KvField& arch = L_.Kv("general.architecture");
  const KvField& align = L_.Kv("general.alignment");
  const KvField& str = L_.Kv("test.str");
  const KvField& toks = L_.Kv("tokenizer.ggml.tokens");
  const KvField& f32s = L_.Kv("test.f32s");
  const TensorField& t0 = L_.Tensor("t0");
  const TensorField& t1 = L_.Tensor("t1");
  const TensorField& t2 = L_.Tensor("t2");
  ASSERT_GT(L_.data_off, L_.infos_end) << "the small file should need header padding";
  const struct {
    const char* where;
    size_t len;
  } cuts[] = {
      // header
      {"empty file", 0},
      {"inside the magic", 2},
      {"inside the version", 6},
      {"inside the tensor count", 12},
      {"inside the kv count", 20},
      // metadata
      {"inside the first key's length", arch.key_off + 3},
      {"inside the first key", arch.key_off + 8 + 5},
      {"inside a value type", align.type_off + 2},
      {"inside a u32 value", align.value_off + 1},
      {"inside a string value's length", str.value_off + 4},
      {"inside a string value", str.value_off + 10},
      {"inside an array's element type", toks.value_off + 2},
      {"inside an array's count", toks.value_off + 8},
      {"inside the last string of an array", toks.end - 1},
      {"inside f32 array items", f32s.end - 2},
      // tensor infos
      {"inside a tensor name's length", t0.name_off + 4},
      {"inside a tensor's n_dims", t1.ndims_off + 1},
      {"inside a tensor's second dimension", t2.ne_off + 12},
      {"inside a tensor's type", t2.type_off + 1},
      {"inside a tensor's offset", t2.offset_off + 4},
      // data
      {"before the header padding", L_.infos_end},
      {"inside the first tensor's data", L_.data_off + 10},
      {"one byte short of the last tensor", L_.data_off + t2.offset + 96 - 1},
  };
  static_assert(std::size(cuts) >= 20);
  for (const auto& c : cuts) {
    SCOPED_TRACE(std::string(c.where) + " (" + std::to_string(c.len) + " bytes)");
    ASSERT_LT(c.len, valid_.size());
    std::vector<uint8_t> b(valid_.begin(), valid_.begin() + ptrdiff_t(c.len));
    EXPECT_TRUE(FailsWith(OpenBytes(b), {"truncated", "past end", "exceeds the file size"}));
  }
}

// Every prefix shorter than the end of the last tensor's data is rejected; every longer one
// (only trailing padding missing) is accepted.
TEST_F(GgufMalformed, EveryTruncationLength) {
  const TensorField& last = L_.tensors.back();
  const size_t data_end = L_.data_off + size_t(last.offset) + 96;  // t2: F16, 48 values
  ASSERT_LE(data_end, valid_.size());
  for (size_t len = 0; len <= valid_.size(); ++len) {
    SCOPED_TRACE("length " + std::to_string(len));
    std::vector<uint8_t> b(valid_.begin(), valid_.begin() + ptrdiff_t(len));
    auto f = OpenBytes(b);
    if (len < data_end) {
      EXPECT_TRUE(FailsWith(f, {"truncated", "past end", "exceeds the file size"}));
    } else {
      EXPECT_TRUE(f.ok()) << f.message();
    }
  }
}

TEST_F(GgufMalformed, TruncatedBeforeTheDataSection) {
  std::vector<uint8_t> b(valid_.begin(), valid_.begin() + ptrdiff_t(L_.infos_end));
  EXPECT_TRUE(FailsWith(OpenBytes(b), {"truncated before the tensor data"}));
}

// ---- header -----------------------------------------------------------------------------------

TEST_F(GgufMalformed, BadMagic) {
  for (const char* magic : {"GGML", "FUGG", "ggu\0", "\0\0\0\0"}) {
    std::vector<uint8_t> b = valid_;
    std::memcpy(b.data(), magic, 4);
    EXPECT_TRUE(FailsWith(OpenBytes(b), {"bad magic"}));
  }
  // Not a GGUF file at all.
  EXPECT_TRUE(FailsWith(OpenBytes(Bytes().Append("{\"json\": true}\n", 15)), {"magic"}));
}

TEST_F(GgufMalformed, UnsupportedVersion) {
  for (uint32_t v : {0u, 1u, 4u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(v);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint32_t>(kVersionOff, v)),
                          {"unsupported GGUF version " + std::to_string(v)}));
  }
}

TEST_F(GgufMalformed, TensorCountAbsurd) {
  for (uint64_t n : {~uint64_t(0), uint64_t(1) << 63, k2to60, uint64_t(1) << 32}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(kTensorCountOff, n)), {"tensor count"}));
  }
  // One more tensor than the file holds: the data bytes are read as a tensor info.
  auto f = OpenBytes(Patched<uint64_t>(kTensorCountOff, 4));
  EXPECT_FALSE(f.ok());
}

TEST_F(GgufMalformed, MetadataCountAbsurd) {
  for (uint64_t n : {~uint64_t(0), k2to60, uint64_t(1) << 32}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(kKvCountOff, n)), {"metadata count"}));
  }
  EXPECT_FALSE(OpenBytes(Patched<uint64_t>(kKvCountOff, L_.kvs.size() + 1)).ok());
}

// ---- metadata ---------------------------------------------------------------------------------

TEST_F(GgufMalformed, UnknownValueType) {
  const KvField& k = L_.Kv("test.k0");
  for (uint32_t t : {13u, 100u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(t);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint32_t>(k.type_off, t)),
                          {"'test.k0' has unknown value type " + std::to_string(t)}));
  }
}

TEST_F(GgufMalformed, UnknownArrayElementType) {
  const KvField& k = L_.Kv("test.i32s");
  EXPECT_TRUE(
      FailsWith(OpenBytes(Patched<uint32_t>(k.value_off, 13)), {"unknown array element type 13"}));
}

TEST_F(GgufMalformed, StringLengthPastEof) {
  const KvField& s = L_.Kv("test.str");
  for (uint64_t len : {uint64_t(valid_.size()), uint64_t(1) << 40, ~uint64_t(0)}) {
    SCOPED_TRACE(len);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(s.value_off, len)),
                          {"string value length " + std::to_string(len) + " runs past end"}));
  }
}

TEST_F(GgufMalformed, KeyLengthPastEof) {
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(L_.Kv("test.k1").key_off, uint64_t(1) << 40)),
                        {"metadata key length", "past end"}));
}

TEST_F(GgufMalformed, StringInArrayPastEof) {
  // The third token's length ("def"): after elem type, count, "a", "bc".
  const KvField& toks = L_.Kv("tokenizer.ggml.tokens");
  const size_t third = toks.value_off + 12 + (8 + 1) + (8 + 2);
  ASSERT_EQ(Peek<uint64_t>(valid_, third), 3u);
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(third, uint64_t(1) << 50)), {"past end"}));
}

TEST_F(GgufMalformed, NumericArrayCountHuge) {
  const KvField& k = L_.Kv("test.f32s");
  for (uint64_t n : {k2to60, uint64_t(1) << 62, ~uint64_t(0), uint64_t(valid_.size())}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(k.value_off + 4, n)),
                          {"array of " + std::to_string(n) + " f32 runs past end"}));
  }
}

TEST_F(GgufMalformed, StringArrayCountHuge) {
  const KvField& k = L_.Kv("tokenizer.ggml.tokens");
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(k.value_off + 4, k2to60)),
                        {"array count " + std::to_string(k2to60) + " exceeds the file size"}));
  // A count that passes the size bound but not the actual strings.
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(k.value_off + 4, 40)),
                        {"past end", "truncated", "unknown", "exceeds"}));
}

TEST_F(GgufMalformed, DuplicateKey) {
  const KvField& k1 = L_.Kv("test.k1");
  std::vector<uint8_t> b = valid_;
  b[k1.key_off + 8 + 6] = '0';  // test.k1 -> test.k0
  EXPECT_TRUE(FailsWith(OpenBytes(b), {"duplicate metadata key 'test.k0'"}));
}

TEST_F(GgufMalformed, AlignmentNotAPowerOfTwo) {
  const KvField& a = L_.Kv("general.alignment");
  for (uint32_t v : {0u, 3u, 48u, 96u, 1u << 21, 0xFFFFFFFFu}) {
    SCOPED_TRACE(v);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint32_t>(a.value_off, v)), {"power of two"}));
  }
  // Of a non-integer type.
  gguf::Writer w;
  w.SetString("general.alignment", "32");
  EXPECT_TRUE(FailsWith(OpenBytes(w.Serialize()), {"general.alignment must be a power of two"}));
  gguf::Writer wf;
  wf.SetF32("general.alignment", 32.0f);
  EXPECT_TRUE(FailsWith(OpenBytes(wf.Serialize()), {"power of two"}));
  gguf::Writer wn;
  wn.SetI32("general.alignment", -32);
  EXPECT_TRUE(FailsWith(OpenBytes(wn.Serialize()), {"power of two"}));
}

TEST_F(GgufMalformed, ArraysNestedTooDeeply) {
  auto nested = [](int depth) {  // depth arrays around one u8 array
    std::vector<uint8_t> v = ArrayBytes(ValueType::kU8, 1, {42});
    for (int d = 0; d < depth; ++d) v = ArrayBytes(ValueType::kArray, 1, v);
    return v;
  };
  auto file_with = [&](const std::vector<uint8_t>& v) {
    return Bytes().Append("GGUF", 4).U32(3).U64(0).U64(1).Kv("deep", ValueType::kArray, v).vec();
  };
  EXPECT_TRUE(OpenBytes(file_with(nested(3))).ok());  // 4 levels
  EXPECT_TRUE(FailsWith(OpenBytes(file_with(nested(4))), {"nested too deeply"}));
  EXPECT_TRUE(FailsWith(OpenBytes(file_with(nested(1000))), {"nested too deeply"}));
}

// ---- tensor infos -----------------------------------------------------------------------------

TEST_F(GgufMalformed, TooManyDimensions) {
  for (uint32_t n : {5u, 0u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint32_t>(L_.Tensor("t2").ndims_off, n)),
                          {"has " + std::to_string(n) + " dimensions"}));
  }
}

TEST_F(GgufMalformed, ElementCountOverflow) {
  const TensorField& t2 = L_.Tensor("t2");  // 4-D
  std::vector<uint8_t> b = valid_;
  for (int d = 0; d < 4; ++d) Poke<uint64_t>(&b, t2.ne_off + 8 * d, uint64_t(1) << 20);  // 2^80
  EXPECT_TRUE(FailsWith(OpenBytes(b), {"element count overflows"}));
  // Products that wrap a uint64 to a small number.
  std::vector<uint8_t> w = valid_;
  Poke<uint64_t>(&w, t2.ne_off, uint64_t(1) << 32);
  Poke<uint64_t>(&w, t2.ne_off + 8, uint64_t(1) << 32);
  Poke<uint64_t>(&w, t2.ne_off + 16, 1);
  Poke<uint64_t>(&w, t2.ne_off + 24, 1);
  EXPECT_TRUE(FailsWith(OpenBytes(w), {"element count overflows"}));
}

TEST_F(GgufMalformed, InvalidDimension) {
  const TensorField& t0 = L_.Tensor("t0");
  for (uint64_t ne : {uint64_t(0), (uint64_t(1) << 62) + 1, ~uint64_t(0)}) {
    SCOPED_TRACE(ne);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(t0.ne_off + 8, ne)),
                          {"invalid dimension " + std::to_string(ne)}));
  }
}

// 2^62 F32 elements is within the element limit, but 2^62 * 4 bytes wraps a uint64 to 0: the
// byte size must not silently become 0 (which would pass every bounds check).
TEST_F(GgufMalformed, ByteSizeOverflow) {
  const TensorField& t0 = L_.Tensor("t0");  // F32 {8, 2}
  std::vector<uint8_t> b = valid_;
  Poke<uint64_t>(&b, t0.ne_off, uint64_t(1) << 31);
  Poke<uint64_t>(&b, t0.ne_off + 8, uint64_t(1) << 31);
  EXPECT_TRUE(FailsWith(OpenBytes(b), {"overflow"}));
  // Just below: an honest (huge) size, reported as running past the end.
  Poke<uint64_t>(&b, t0.ne_off + 8, uint64_t(1) << 30);
  EXPECT_TRUE(FailsWith(OpenBytes(b), {"runs past end of file"}));
}

TEST_F(GgufMalformed, UnknownTensorType) {
  const TensorField& t0 = L_.Tensor("t0");
  for (uint32_t t : {4u, 5u, 31u, 99u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(t);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint32_t>(t0.type_off, t)),
                          {"'t0' has unknown type id " + std::to_string(t)}));
  }
  // Known to ggml, not loadable by brisk.
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint32_t>(t0.type_off, uint32_t(GgmlType::kQ8_1))),
                        {"cannot load"}));
}

TEST_F(GgufMalformed, RowNotAMultipleOfTheBlockSize) {
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(L_.Tensor("t1").ne_off, 33)),
                        {"not a multiple of the Q8_0 block size 32"}));
}

// IQ4_XS rows come in 256-value super-blocks (t1 has 32 values per row); IQ4_NL with t1's 32 is a
// valid shape, its 36 bytes fit t1's data, so the file opens.
TEST_F(GgufMalformed, IQ4RowsNotAMultipleOfTheBlockSize) {
  const TensorField& t1 = L_.Tensor("t1");
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint32_t>(t1.type_off, uint32_t(GgmlType::kIQ4_XS))),
                        {"not a multiple of the IQ4_XS block size 256"}));
  EXPECT_TRUE(OpenBytes(Patched<uint32_t>(t1.type_off, uint32_t(GgmlType::kIQ4_NL))).ok());
}

TEST_F(GgufMalformed, TensorNameLengthPastEof) {
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(L_.Tensor("t1").name_off, ~uint64_t(0))),
                        {"tensor name length", "past end"}));
}

TEST_F(GgufMalformed, DuplicateTensorName) {
  std::vector<uint8_t> b = valid_;
  b[L_.Tensor("t1").name_off + 8 + 1] = '0';  // t1 -> t0
  EXPECT_TRUE(FailsWith(OpenBytes(b), {"duplicate tensor name 't0'"}));
}

TEST_F(GgufMalformed, MisalignedTensorOffset) {
  const TensorField& t1 = L_.Tensor("t1");
  for (uint64_t delta : {uint64_t(1), uint64_t(8), uint64_t(16)}) {
    SCOPED_TRACE(delta);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(t1.offset_off, t1.offset + delta)),
                          {"is not aligned to 32"}));
  }
}

// ---- data section -----------------------------------------------------------------------------

TEST_F(GgufMalformed, TensorDataPastEof) {
  const TensorField& t2 = L_.Tensor("t2");
  const uint64_t data_bytes = valid_.size() - L_.data_off;
  for (uint64_t off : {data_bytes, data_bytes + 32, uint64_t(1) << 40,
                       ~uint64_t(0) - 31,   // offset + nbytes wraps around
                       data_bytes - 64}) {  // starts inside, ends outside
    SCOPED_TRACE(off);
    EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(t2.offset_off, off)),
                          {"'t2' data", "runs past end of file"}));
  }
  // The file cut short inside the last tensor.
  std::vector<uint8_t> b(valid_.begin(), valid_.begin() + ptrdiff_t(L_.data_off + t2.offset + 50));
  EXPECT_TRUE(FailsWith(OpenBytes(b), {"runs past end of file"}));
}

TEST_F(GgufMalformed, OverlappingTensors) {
  const TensorField& t0 = L_.Tensor("t0");  // 64 bytes at 0
  const TensorField& t1 = L_.Tensor("t1");
  ASSERT_EQ(t0.offset, 0u);
  // Same start.
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(t1.offset_off, t0.offset)), {"overlap"}));
  // t1 starting inside t0.
  EXPECT_TRUE(FailsWith(OpenBytes(Patched<uint64_t>(t1.offset_off, t0.offset + 32)), {"overlap"}));
  // t0 moved into t2's range (order in the file differs from order in the data).
  EXPECT_TRUE(
      FailsWith(OpenBytes(Patched<uint64_t>(t0.offset_off, L_.Tensor("t2").offset)), {"overlap"}));
  // Reordered but touching is fine: t1 (68 bytes) at 0, t0 (64 bytes) at 96, ending where t2
  // (at 160) starts.
  ASSERT_EQ(L_.Tensor("t2").offset, 160u);
  std::vector<uint8_t> b = Patched<uint64_t>(t1.offset_off, 0);
  Poke<uint64_t>(&b, t0.offset_off, 96);
  auto f = OpenBytes(b);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->FindTensor("t0")->offset, 96u);
}

// ---- not a file -------------------------------------------------------------------------------

TEST_F(GgufMalformed, NotAFile) {
  auto missing = File::Open(dir_ + "/does-not-exist.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("cannot open"), std::string::npos) << missing.message();
  auto dir = File::Open(dir_);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.message().find("not a regular file"), std::string::npos) << dir.message();
}

// Messages carry the path and the byte offset of the problem.
TEST_F(GgufMalformed, MessageNamesPathAndOffset) {
  const std::string path = WriteBytes(Patched<uint32_t>(kVersionOff, 1), "named");
  auto f = File::Open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.message().rfind(path + ": GGUF: ", 0), 0u) << f.message();
  EXPECT_NE(f.message().find("at byte offset 8"), std::string::npos) << f.message();
}

}  // namespace
}  // namespace brisk::gguf_test
