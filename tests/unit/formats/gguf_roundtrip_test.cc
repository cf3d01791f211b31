// GGUF round trips: values of every type and tensors of several types go through the Writer (or
// are laid out by hand from the format description), are written to disk and read back; every
// key, value, tensor field, offset and data byte must match.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "gguf_test_util.h"

namespace brisk::gguf_test {
namespace {

using gguf::File;
using gguf::TensorInfo;
using gguf::Value;
using gguf::Writer;

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A Value whose serialized form is `bytes`, for Writer::SetRaw (how values of types without a
// dedicated setter get into a file).
Value RawValue(ValueType t, const std::vector<uint8_t>& bytes) {
  Value v;
  v.type = t;
  v.raw = bytes.data();
  v.raw_bytes = bytes.size();
  return v;
}

template <typename T>
std::vector<uint8_t> Items(const std::vector<T>& xs) {
  Bytes b;
  for (const T& x : xs) b.Put(x);
  return b;
}

std::vector<uint8_t> StringItems(const std::vector<std::string>& xs) {
  Bytes b;
  for (const std::string& s : xs) b.Str(s);
  return b;
}

// Everything a round trip must reproduce.
struct ExpectedKv {
  std::string key;
  ValueType type;
  std::vector<uint8_t> bytes;  // the value as the format spells it (independently built)
};

struct ExpectedTensor {
  std::string name;
  GgmlType type;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

// Builds a writer holding a value of every type (the typed setters where they exist, SetRaw
// with hand-serialized bytes otherwise), records the expected encodings, and adds tensors.
class Content {
 public:
  explicit Content(uint32_t alignment) {
    if (alignment) Set("general.alignment", ValueType::kU32, ScalarBytes<uint32_t>(alignment));
    // Typed setters, each checked against an independent encoding.
    w_.SetString("general.architecture", "qwen2");
    Expect("general.architecture", ValueType::kString, StringBytes("qwen2"));
    w_.SetU8("v.u8", 200);
    Expect("v.u8", ValueType::kU8, ScalarBytes<uint8_t>(200));
    w_.SetU32("v.u32", 4000000000u);
    Expect("v.u32", ValueType::kU32, ScalarBytes<uint32_t>(4000000000u));
    w_.SetI32("v.i32", -123456);
    Expect("v.i32", ValueType::kI32, ScalarBytes<int32_t>(-123456));
    w_.SetU64("v.u64", 0xFEDCBA9876543210ull);
    Expect("v.u64", ValueType::kU64, ScalarBytes<uint64_t>(0xFEDCBA9876543210ull));
    w_.SetF32("v.f32", 0.15625f);
    Expect("v.f32", ValueType::kF32, ScalarBytes<float>(0.15625f));
    w_.SetBool("v.true", true);
    Expect("v.true", ValueType::kBool, ScalarBytes<uint8_t>(1));
    w_.SetBool("v.false", false);
    Expect("v.false", ValueType::kBool, ScalarBytes<uint8_t>(0));
    const std::string_view nul("a\0b\xff", 4);
    w_.SetString("v.str", nul);
    Expect("v.str", ValueType::kString, StringBytes(nul));
    w_.SetString("v.empty", "");
    Expect("v.empty", ValueType::kString, StringBytes(""));
    w_.SetStringArray("v.strs", std::vector<std::string>{"x", "", "hello", "w\xc3\xa9"});
    Expect("v.strs", ValueType::kArray,
           ArrayBytes(ValueType::kString, 4, StringItems({"x", "", "hello", "w\xc3\xa9"})));
    w_.SetStringArray("v.strviews", std::vector<std::string_view>{"p", "qq"});
    Expect("v.strviews", ValueType::kArray,
           ArrayBytes(ValueType::kString, 2, StringItems({"p", "qq"})));
    w_.SetI32Array("v.i32s", {1, -2, std::numeric_limits<int32_t>::min()});
    Expect("v.i32s", ValueType::kArray,
           ArrayBytes(ValueType::kI32, 3,
                      Items<int32_t>({1, -2, std::numeric_limits<int32_t>::min()})));
    const std::vector<float> fs = {1.5f, -0.0f, std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::denorm_min(), 3e38f};
    w_.SetF32Array("v.f32s", fs);
    Expect("v.f32s", ValueType::kArray, ArrayBytes(ValueType::kF32, fs.size(), Items(fs)));
    w_.SetI32Array("v.empty_i32s", {});
    Expect("v.empty_i32s", ValueType::kArray, ArrayBytes(ValueType::kI32, 0, {}));
    w_.SetStringArray("v.empty_strs", std::vector<std::string>{});
    Expect("v.empty_strs", ValueType::kArray, ArrayBytes(ValueType::kString, 0, {}));
    // Setting a key again replaces the value in place.
    w_.SetU32("v.replaced", 1);
    w_.SetString("v.replaced", "second");
    Expect("v.replaced", ValueType::kString, StringBytes("second"));

    // Types without a setter: hand-serialized, through SetRaw.
    Set("v.i8", ValueType::kI8, ScalarBytes<int8_t>(-5));
    Set("v.u16", ValueType::kU16, ScalarBytes<uint16_t>(65535));
    Set("v.i16", ValueType::kI16, ScalarBytes<int16_t>(-32768));
    Set("v.i64", ValueType::kI64, ScalarBytes<int64_t>(std::numeric_limits<int64_t>::min()));
    Set("v.f64", ValueType::kF64, ScalarBytes<double>(3.141592653589793));
    Set("v.u8s", ValueType::kArray, ArrayBytes(ValueType::kU8, 3, Items<uint8_t>({0, 128, 255})));
    Set("v.i8s", ValueType::kArray, ArrayBytes(ValueType::kI8, 2, Items<int8_t>({-128, 127})));
    Set("v.u16s", ValueType::kArray, ArrayBytes(ValueType::kU16, 2, Items<uint16_t>({1, 65535})));
    Set("v.i16s", ValueType::kArray, ArrayBytes(ValueType::kI16, 2, Items<int16_t>({-1, 300})));
    Set("v.u32s", ValueType::kArray,
        ArrayBytes(ValueType::kU32, 1, Items<uint32_t>({4000000000u})));
    Set("v.u64s", ValueType::kArray,
        ArrayBytes(ValueType::kU64, 2, Items<uint64_t>({0, 0x8000000000000000ull})));
    Set("v.i64s", ValueType::kArray,
        ArrayBytes(ValueType::kI64, 2, Items<int64_t>({-7, 1ll << 40})));
    Set("v.f64s", ValueType::kArray, ArrayBytes(ValueType::kF64, 2, Items<double>({0.25, -1e300})));
    Set("v.bools", ValueType::kArray, ArrayBytes(ValueType::kBool, 3, Items<uint8_t>({1, 0, 1})));
    // Nested: [[1, 2], [3]] of i32, and [["a"], []] of strings.
    Bytes nested_ints;
    nested_ints.Append(ArrayBytes(ValueType::kI32, 2, Items<int32_t>({1, 2})))
        .Append(ArrayBytes(ValueType::kI32, 1, Items<int32_t>({3})));
    Set("v.nested", ValueType::kArray, ArrayBytes(ValueType::kArray, 2, nested_ints));
    Bytes nested_strs;
    nested_strs.Append(ArrayBytes(ValueType::kString, 1, StringItems({"a"})))
        .Append(ArrayBytes(ValueType::kString, 0, {}));
    Set("v.nested_strs", ValueType::kArray, ArrayBytes(ValueType::kArray, 2, nested_strs));

    // Tensors of several types, sizes from RowBytes; F32 {7, 3} is 84 bytes, so the next
    // tensor needs padding.
    AddTensor("f32", GgmlType::kF32, {7, 3});
    AddTensor("f16", GgmlType::kF16, {16, 5});
    AddTensor("q8_0", GgmlType::kQ8_0, {64, 3});
    AddTensor("q4_k", GgmlType::kQ4_K, {256, 2});
    AddTensor("q6_k.3d", GgmlType::kQ6_K, {512, 1, 2});
    AddTensor("bf16.4d", GgmlType::kBF16, {3, 1, 1, 2});
    AddTensor("q5_0", GgmlType::kQ5_0, {32, 1});
    AddTensor("blk.0.attn_q.weight", GgmlType::kQ4_0, {96, 4});
    // The writer keeps pointers to the data: add them once the list is final.
    for (const ExpectedTensor& t : tensors_)
      w_.AddTensor(t.name, t.type, t.dims, t.data.data(), t.data.size());
  }
  Content(const Content&) = delete;
  Content& operator=(const Content&) = delete;

  const Writer& writer() const { return w_; }
  const std::vector<ExpectedKv>& kvs() const { return kvs_; }
  const std::vector<ExpectedTensor>& tensors() const { return tensors_; }

 private:
  void Expect(const std::string& key, ValueType t, std::vector<uint8_t> bytes) {
    for (ExpectedKv& kv : kvs_) {
      if (kv.key == key) {
        kv.type = t;
        kv.bytes = std::move(bytes);
        return;
      }
    }
    kvs_.push_back({key, t, std::move(bytes)});
  }
  void Set(const std::string& key, ValueType t, const std::vector<uint8_t>& bytes) {
    w_.SetRaw(key, RawValue(t, bytes));
    Expect(key, t, bytes);
  }
  void AddTensor(const std::string& name, GgmlType t, std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    const size_t nbytes = RowBytes(t, dims[0]) * size_t(n / dims[0]);
    tensors_.push_back({name, t, dims, PatternBytes(nbytes, uint32_t(tensors_.size() + 11))});
  }

  Writer w_;
  std::vector<ExpectedKv> kvs_;
  std::vector<ExpectedTensor> tensors_;
};

// Checks everything in `f` (read from `bytes`) against `c`.
void CheckMatches(const File& f, const std::vector<uint8_t>& bytes, const Content& c,
                  uint32_t version, uint64_t alignment) {
  EXPECT_EQ(f.version(), version);
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.file_size(), bytes.size());
  const Layout L = Scan(bytes);
  ASSERT_TRUE(L.ok);
  EXPECT_EQ(f.data_offset(), L.data_off);
  EXPECT_EQ(f.data_offset() % alignment, 0u);
  EXPECT_GE(f.data_offset(), L.infos_end);
  EXPECT_LT(f.data_offset(), L.infos_end + alignment);

  // Metadata: same keys in the same order, each value's bytes exactly as specified.
  ASSERT_EQ(f.metadata().size(), c.kvs().size());
  for (size_t k = 0; k < c.kvs().size(); ++k) {
    const auto& [key, v] = f.metadata()[k];
    const ExpectedKv& e = c.kvs()[k];
    SCOPED_TRACE(e.key);
    EXPECT_EQ(key, e.key);
    EXPECT_EQ(v.type, e.type);
    ASSERT_EQ(v.raw_bytes, e.bytes.size());
    EXPECT_EQ(std::memcmp(v.raw, e.bytes.data(), e.bytes.size()), 0);
    EXPECT_EQ(f.Find(e.key), &v);
  }
  EXPECT_EQ(f.Find("no.such.key"), nullptr);

  // Decoded scalars through the typed getters.
  EXPECT_EQ(*f.GetString("general.architecture"), "qwen2");
  EXPECT_EQ(*f.GetUInt("v.u8"), 200u);
  EXPECT_EQ(*f.GetInt("v.i8"), -5);
  EXPECT_EQ(*f.GetUInt("v.u16"), 65535u);
  EXPECT_EQ(*f.GetInt("v.i16"), -32768);
  EXPECT_EQ(*f.GetUInt("v.u32"), 4000000000u);
  EXPECT_EQ(*f.GetInt("v.u32"), 4000000000);
  EXPECT_EQ(*f.GetInt("v.i32"), -123456);
  EXPECT_EQ(*f.GetUInt("v.u64"), 0xFEDCBA9876543210ull);
  EXPECT_EQ(*f.GetInt("v.i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(*f.GetFloat("v.f32"), 0.15625);
  EXPECT_EQ(*f.GetFloat("v.f64"), 3.141592653589793);
  EXPECT_EQ(*f.GetFloat("v.i32"), -123456.0);
  EXPECT_TRUE(*f.GetBool("v.true"));
  EXPECT_FALSE(*f.GetBool("v.false"));
  EXPECT_EQ(*f.GetString("v.str"), std::string("a\0b\xff", 4));
  EXPECT_EQ(*f.GetString("v.empty"), "");
  EXPECT_EQ(*f.GetString("v.replaced"), "second");

  // Arrays.
  auto strs = f.GetStringArray("v.strs");
  ASSERT_TRUE(strs.ok()) << strs.message();
  EXPECT_EQ(*strs, (std::vector<std::string_view>{"x", "", "hello", "w\xc3\xa9"}));
  EXPECT_EQ(*f.GetStringArray("v.strviews"), (std::vector<std::string_view>{"p", "qq"}));
  EXPECT_TRUE(f.GetStringArray("v.empty_strs")->empty());
  EXPECT_EQ(*f.GetIntArray("v.i32s"),
            (std::vector<int64_t>{1, -2, std::numeric_limits<int32_t>::min()}));
  EXPECT_TRUE(f.GetIntArray("v.empty_i32s")->empty());
  EXPECT_EQ(*f.GetIntArray("v.u8s"), (std::vector<int64_t>{0, 128, 255}));
  EXPECT_EQ(*f.GetIntArray("v.i8s"), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(*f.GetIntArray("v.u16s"), (std::vector<int64_t>{1, 65535}));
  EXPECT_EQ(*f.GetIntArray("v.i16s"), (std::vector<int64_t>{-1, 300}));
  EXPECT_EQ(*f.GetIntArray("v.u32s"), (std::vector<int64_t>{4000000000}));
  EXPECT_EQ(*f.GetIntArray("v.i64s"), (std::vector<int64_t>{-7, 1ll << 40}));
  EXPECT_EQ(*f.GetFloatArray("v.f64s"), (std::vector<float>{0.25f, float(-1e300)}));
  auto fs = f.GetFloatArray("v.f32s");
  ASSERT_TRUE(fs.ok()) << fs.message();
  ASSERT_EQ(fs->size(), 5u);
  EXPECT_EQ((*fs)[0], 1.5f);
  EXPECT_TRUE(std::signbit((*fs)[1]) && (*fs)[1] == 0.0f);
  EXPECT_TRUE(std::isinf((*fs)[2]));
  EXPECT_EQ((*fs)[3], std::numeric_limits<float>::denorm_min());
  EXPECT_EQ((*fs)[4], 3e38f);
  const Value* bools = f.Find("v.bools");
  ASSERT_NE(bools, nullptr);
  EXPECT_EQ(bools->elem_type, ValueType::kBool);
  EXPECT_EQ(bools->count, 3u);
  EXPECT_EQ(bools->ToString(), "[bool x 3: true, false, true]");
  const Value* nested = f.Find("v.nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->elem_type, ValueType::kArray);
  EXPECT_EQ(nested->count, 2u);
  EXPECT_EQ(nested->items_bytes, nested->raw_bytes - 12);
  const Value* nested_strs = f.Find("v.nested_strs");
  ASSERT_NE(nested_strs, nullptr);
  EXPECT_EQ(nested_strs->elem_type, ValueType::kArray);
  EXPECT_EQ(nested_strs->count, 2u);

  // Tensors: same order, fields, aligned non-overlapping offsets, identical data.
  ASSERT_EQ(f.tensors().size(), c.tensors().size());
  uint64_t prev_end = 0;
  for (size_t k = 0; k < c.tensors().size(); ++k) {
    const TensorInfo& t = f.tensors()[k];
    const ExpectedTensor& e = c.tensors()[k];
    SCOPED_TRACE(e.name);
    EXPECT_EQ(t.name, e.name);
    EXPECT_EQ(f.FindTensor(e.name), &t);
    EXPECT_EQ(t.type, e.type);
    ASSERT_EQ(t.n_dims, int(e.dims.size()));
    int64_t n = 1;
    for (int d = 0; d < gguf::kMaxDims; ++d) {
      const int64_t want = d < t.n_dims ? e.dims[d] : 1;
      EXPECT_EQ(t.ne[d], want) << "dim " << d;
      n *= want;
    }
    EXPECT_EQ(t.n_elements, n);
    EXPECT_EQ(t.rows(), n / e.dims[0]);
    EXPECT_EQ(t.nbytes, RowBytes(e.type, e.dims[0]) * uint64_t(t.rows()));
    EXPECT_EQ(t.nbytes, e.data.size());
    EXPECT_EQ(t.offset, L.tensors[k].offset);
    EXPECT_EQ(t.offset % alignment, 0u);
    EXPECT_GE(t.offset, prev_end);
    EXPECT_LT(t.offset, prev_end + alignment);  // the writer packs tensors, padding only
    prev_end = t.offset + t.nbytes;
    ASSERT_LE(f.data_offset() + t.offset + t.nbytes, bytes.size());
    EXPECT_EQ(t.data, f.tensors()[0].data + (t.offset - f.tensors()[0].offset));
    EXPECT_EQ(std::memcmp(t.data, e.data.data(), e.data.size()), 0);
    EXPECT_EQ(std::memcmp(bytes.data() + f.data_offset() + t.offset, e.data.data(), e.data.size()),
              0);
  }
  EXPECT_EQ(f.FindTensor("missing"), nullptr);
  // Padding is zero-filled and the file ends aligned.
  EXPECT_EQ(bytes.size() % alignment, 0u);
  EXPECT_LE(bytes.size() - (f.data_offset() + prev_end), alignment);
  for (size_t i = L.infos_end; i < L.data_off; ++i) EXPECT_EQ(bytes[i], 0) << "header pad " << i;
}

struct RoundTripCase {
  uint32_t alignment_key;  // 0: no general.alignment key (default 32)
  uint32_t version;
};

class GgufRoundTrip : public GgufFileTest, public ::testing::WithParamInterface<RoundTripCase> {};

TEST_P(GgufRoundTrip, EveryValueTypeAndSeveralTensorTypes) {
  const RoundTripCase p = GetParam();
  const uint64_t alignment = p.alignment_key ? p.alignment_key : gguf::kDefaultAlignment;
  Content c(p.alignment_key);

  std::vector<uint8_t> bytes = c.writer().Serialize();
  ASSERT_EQ(Peek<uint32_t>(bytes, kVersionOff), 3u);
  // Write() produces exactly the serialized bytes.
  const std::string written = dir_ + "/written.gguf";
  ASSERT_TRUE(c.writer().Write(written).ok());
  EXPECT_EQ(ReadAll(written), bytes);
  EXPECT_FALSE(std::filesystem::exists(written + ".partial"));

  std::string path = written;
  if (p.version != 3) {  // version 2 has the same layout for everything brisk reads
    Poke<uint32_t>(&bytes, kVersionOff, p.version);
    path = WriteBytes(bytes);
  }
  auto f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->path(), path);
  CheckMatches(*f, bytes, c, p.version, alignment);
}

INSTANTIATE_TEST_SUITE_P(AlignmentsAndVersions, GgufRoundTrip,
                         ::testing::Values(RoundTripCase{0, 3}, RoundTripCase{32, 3},
                                           RoundTripCase{64, 3}, RoundTripCase{0, 2},
                                           RoundTripCase{32, 2}, RoundTripCase{64, 2},
                                           RoundTripCase{128, 3}, RoundTripCase{1, 3}),
                         [](const ::testing::TestParamInfo<RoundTripCase>& i) {
                           return "align" + std::to_string(i.param.alignment_key) + "_v" +
                                  std::to_string(i.param.version);
                         });

// A file laid out by hand from the format description (not by the Writer): version 2, every
// value type including nested arrays, alignment 64 given as a u64, tensors with explicit
// offsets and a gap between them. The reader must decode it, and the Writer given the same
// content must produce the same bytes (apart from the version it always writes).
TEST_F(GgufFileTest, HandBuiltFileMatchesSpecAndWriter) {
  const std::vector<uint8_t> w0 = PatternBytes(RowBytes(GgmlType::kQ8_0, 64) * 2, 5);  // 136 B
  const std::vector<uint8_t> w1 = PatternBytes(RowBytes(GgmlType::kF32, 3), 6);        // 12 B
  struct Kv {
    const char* key;
    ValueType t;
    std::vector<uint8_t> v;
  };
  const std::vector<Kv> kvs = {
      {"general.alignment", ValueType::kU64, ScalarBytes<uint64_t>(64)},
      {"k.u8", ValueType::kU8, ScalarBytes<uint8_t>(0xAB)},
      {"k.i8", ValueType::kI8, ScalarBytes<int8_t>(-1)},
      {"k.u16", ValueType::kU16, ScalarBytes<uint16_t>(0xBEEF)},
      {"k.i16", ValueType::kI16, ScalarBytes<int16_t>(-2)},
      {"k.u32", ValueType::kU32, ScalarBytes<uint32_t>(0xDEADBEEF)},
      {"k.i32", ValueType::kI32, ScalarBytes<int32_t>(-3)},
      {"k.f32", ValueType::kF32, ScalarBytes<float>(-0.5f)},
      {"k.bool", ValueType::kBool, ScalarBytes<uint8_t>(1)},
      {"k.str", ValueType::kString, StringBytes("text")},
      {"k.u64", ValueType::kU64, ScalarBytes<uint64_t>(~0ull)},
      {"k.i64", ValueType::kI64, ScalarBytes<int64_t>(-4)},
      {"k.f64", ValueType::kF64, ScalarBytes<double>(1e-300)},
      {"k.arr", ValueType::kArray,
       ArrayBytes(ValueType::kArray, 2,
                  Bytes()
                      .Append(ArrayBytes(ValueType::kU16, 2, Items<uint16_t>({7, 8})))
                      .Append(ArrayBytes(ValueType::kArray, 1,
                                         ArrayBytes(ValueType::kString, 1, StringItems({"deep"}))))
                      .vec())},
  };
  Bytes b;
  b.Append("GGUF", 4).U32(2).U64(2).U64(kvs.size());
  for (const Kv& kv : kvs) b.Kv(kv.key, kv.t, kv.v);
  b.Str("w0").U32(2).U64(64).U64(2).U32(uint32_t(GgmlType::kQ8_0)).U64(0);
  b.Str("w1").U32(1).U64(3).U32(uint32_t(GgmlType::kF32)).U64(192);  // 136 -> 192: a gap
  b.PadTo(64);
  const size_t data_start = b.size();
  b.Append(w0).PadTo(64);
  ASSERT_EQ(b.size(), data_start + 192);
  b.Append(w1);  // no trailing padding: the file ends where the last tensor does

  auto f = OpenBytes(b);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset(), data_start);
  ASSERT_EQ(f->metadata().size(), kvs.size());
  for (size_t k = 0; k < kvs.size(); ++k) {
    SCOPED_TRACE(kvs[k].key);
    EXPECT_EQ(f->metadata()[k].first, kvs[k].key);
    EXPECT_EQ(f->metadata()[k].second.type, kvs[k].t);
    ASSERT_EQ(f->metadata()[k].second.raw_bytes, kvs[k].v.size());
    EXPECT_EQ(std::memcmp(f->metadata()[k].second.raw, kvs[k].v.data(), kvs[k].v.size()), 0);
  }
  EXPECT_EQ(*f->GetUInt("k.u8"), 0xABu);
  EXPECT_EQ(*f->GetInt("k.i8"), -1);
  EXPECT_EQ(*f->GetUInt("k.u16"), 0xBEEFu);
  EXPECT_EQ(*f->GetInt("k.i16"), -2);
  EXPECT_EQ(*f->GetUInt("k.u32"), 0xDEADBEEFu);
  EXPECT_EQ(*f->GetInt("k.i32"), -3);
  EXPECT_EQ(*f->GetFloat("k.f32"), -0.5);
  EXPECT_TRUE(*f->GetBool("k.bool"));
  EXPECT_EQ(*f->GetString("k.str"), "text");
  EXPECT_EQ(*f->GetUInt("k.u64"), ~0ull);
  EXPECT_EQ(*f->GetInt("k.i64"), -4);
  EXPECT_EQ(*f->GetFloat("k.f64"), 1e-300);
  EXPECT_EQ(f->Find("k.arr")->count, 2u);
  EXPECT_EQ(f->Find("k.arr")->ToString(), "[array x 2]");
  ASSERT_EQ(f->tensors().size(), 2u);
  const TensorInfo& t0 = f->tensors()[0];
  const TensorInfo& t1 = f->tensors()[1];
  EXPECT_EQ(t0.type, GgmlType::kQ8_0);
  EXPECT_EQ(t0.nbytes, 136u);
  EXPECT_EQ(t0.rows(), 2);
  EXPECT_EQ(t1.offset, 192u);
  EXPECT_EQ(t1.nbytes, 12u);
  EXPECT_EQ(std::memcmp(t0.data, w0.data(), w0.size()), 0);
  EXPECT_EQ(std::memcmp(t1.data, w1.data(), w1.size()), 0);

  // The Writer, given the same content, lays out the header identically (version aside) and
  // packs w1 at the first aligned offset after w0 (192 too).
  Writer w;
  for (const Kv& kv : kvs) w.SetRaw(kv.key, RawValue(kv.t, kv.v));
  w.AddTensor("w0", GgmlType::kQ8_0, {64, 2}, w0.data(), w0.size());
  w.AddTensor("w1", GgmlType::kF32, {3}, w1.data(), w1.size());
  std::vector<uint8_t> from_writer = w.Serialize();
  Poke<uint32_t>(&from_writer, kVersionOff, 2);
  std::vector<uint8_t> by_hand = b;
  by_hand.resize((by_hand.size() + 63) / 64 * 64, 0);  // the Writer pads the tail
  EXPECT_EQ(from_writer, by_hand);
}

// general.alignment given as a u64 (or u8/u16) must be honoured by the Writer too, or the reader
// (which accepts any integer type) would look for the data in the wrong place.
TEST_F(GgufFileTest, WriterHonoursAlignmentOfAnyUnsignedType) {
  const std::vector<uint8_t> d = PatternBytes(RowBytes(GgmlType::kF32, 5), 9);  // 20 bytes
  for (ValueType t : {ValueType::kU8, ValueType::kU16, ValueType::kU64}) {
    SCOPED_TRACE(std::string(gguf::ValueTypeName(t)));
    Writer w;
    std::vector<uint8_t> v(ScalarSize(uint32_t(t)), 0);
    v[0] = 128;
    w.SetRaw("general.alignment", RawValue(t, v));
    w.AddTensor("a", GgmlType::kF32, {5}, d.data(), d.size());
    w.AddTensor("b", GgmlType::kF32, {5}, d.data(), d.size());
    auto f = OpenBytes(w.Serialize());
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_EQ(f->alignment(), 128u);
    EXPECT_EQ(f->data_offset() % 128, 0u);
    ASSERT_EQ(f->tensors().size(), 2u);
    EXPECT_EQ(f->tensors()[1].offset, 128u);
    EXPECT_EQ(std::memcmp(f->tensors()[1].data, d.data(), d.size()), 0);
  }
}

// A file without tensors (a vocabulary-only file) is valid; its data section may be absent.
TEST_F(GgufFileTest, NoTensorsIsValid) {
  Writer w;
  w.SetString("general.architecture", "qwen2");
  w.SetStringArray("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b"});
  std::vector<uint8_t> bytes = w.Serialize();
  auto f = OpenBytes(bytes);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_TRUE(f->tensors().empty());
  EXPECT_EQ(f->metadata().size(), 2u);
  // Without the header padding too.
  const Layout L = Scan(bytes);
  bytes.resize(L.infos_end);
  auto g = OpenBytes(bytes);
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g->GetStringArray("tokenizer.ggml.tokens")->size(), 2u);
  // Header only, no metadata at all.
  auto h = OpenBytes(Bytes().Append("GGUF", 4).U32(3).U64(0).U64(0));
  ASSERT_TRUE(h.ok()) << h.message();
  EXPECT_TRUE(h->metadata().empty());
}

// FromBuffer parses an image in memory without copying it: every pointer lands in the buffer.
TEST_F(GgufFileTest, FromBufferPointsIntoTheBuffer) {
  const std::vector<uint8_t> bytes = SmallValidFile();
  auto f = File::FromBuffer(bytes.data(), bytes.size(), "embedded");
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->path(), "embedded");
  EXPECT_EQ(f->file_size(), bytes.size());
  const Layout L = Scan(bytes);
  EXPECT_EQ(f->data_offset(), L.data_off);
  ASSERT_EQ(f->tensors().size(), 3u);
  for (const TensorInfo& t : f->tensors())
    EXPECT_EQ(t.data, bytes.data() + f->data_offset() + t.offset) << t.name;
  const Value* s = f->Find("test.str");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(s->str.data()),
            bytes.data() + L.Kv("test.str").value_off + 8);
  EXPECT_EQ(*f->GetStringArray("tokenizer.ggml.tokens"),
            (std::vector<std::string_view>{"a", "bc", "def"}));
  // Errors name the buffer.
  auto bad = File::FromBuffer(bytes.data(), 3, "embedded");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message().rfind("embedded: GGUF: file truncated", 0), 0u) << bad.message();
  auto empty = File::FromBuffer(nullptr, 0, "empty");
  EXPECT_FALSE(empty.ok());
}

TEST_F(GgufFileTest, GettersNameTheProblem) {
  auto f = OpenBytes(SmallValidFile());
  ASSERT_TRUE(f.ok()) << f.message();
  auto missing = f->GetString("no.such.key");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("missing required metadata key 'no.such.key'"),
            std::string::npos)
      << missing.message();
  auto wrong = f->GetString("test.k0");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("should be a string, found u32"), std::string::npos)
      << wrong.message();
  EXPECT_FALSE(f->GetUInt("test.str").ok());
  EXPECT_FALSE(f->GetBool("test.k0").ok());
  EXPECT_FALSE(f->GetFloat("test.str").ok());
  EXPECT_FALSE(f->GetStringArray("test.i32s").ok());
  EXPECT_FALSE(f->GetIntArray("tokenizer.ggml.tokens").ok());
  EXPECT_FALSE(f->GetIntArray("test.f32s").ok());
  EXPECT_FALSE(f->GetFloatArray("test.i32s").ok());
  EXPECT_FALSE(f->GetIntArray("test.k0").ok());

  Writer w;
  w.SetI32("neg", -1);
  w.SetU64("big", ~0ull);
  auto g = OpenBytes(w.Serialize());
  ASSERT_TRUE(g.ok()) << g.message();
  auto neg = g->GetUInt("neg");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.message().find("negative"), std::string::npos) << neg.message();
  auto big = g->GetInt("big");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.message().find("too large"), std::string::npos) << big.message();
  EXPECT_EQ(*g->GetUInt("big"), ~0ull);
}

}  // namespace
}  // namespace brisk::gguf_test
