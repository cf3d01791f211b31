// Helpers for the GGUF tests: a little-endian byte builder for hand-made files, a field locator
// that walks a well-formed file independently of the reader (so tests patch fields by name, not
// by hard-coded offsets), a small valid file, and a fixture writing bytes to temporary files.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "formats/gguf.h"
#include "formats/gguf_writer.h"
#include "quant/types.h"
#include "test_paths.h"

namespace brisk::gguf_test {

using gguf::ValueType;

// ---- byte building and patching ---------------------------------------------------------------

class Bytes {
 public:
  template <typename T>
  Bytes& Put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b_.insert(b_.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes& U8(uint8_t v) { return Put(v); }
  Bytes& I8(int8_t v) { return Put(v); }
  Bytes& U16(uint16_t v) { return Put(v); }
  Bytes& I16(int16_t v) { return Put(v); }
  Bytes& U32(uint32_t v) { return Put(v); }
  Bytes& I32(int32_t v) { return Put(v); }
  Bytes& U64(uint64_t v) { return Put(v); }
  Bytes& I64(int64_t v) { return Put(v); }
  Bytes& F32(float v) { return Put(v); }
  Bytes& F64(double v) { return Put(v); }
  Bytes& Type(ValueType t) { return U32(uint32_t(t)); }
  // GGUF string: uint64 length, then the bytes.
  Bytes& Str(std::string_view s) {
    U64(s.size());
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& Append(const std::vector<uint8_t>& o) {
    b_.insert(b_.end(), o.begin(), o.end());
    return *this;
  }
  Bytes& Append(const void* p, size_t n) {
    const auto* q = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), q, q + n);
    return *this;
  }
  Bytes& PadTo(size_t align) {
    b_.resize((b_.size() + align - 1) / align * align, 0);
    return *this;
  }
  // One metadata pair: key, type tag, serialized value.
  Bytes& Kv(std::string_view key, ValueType t, const std::vector<uint8_t>& value) {
    return Str(key).Type(t).Append(value);
  }
  size_t size() const { return b_.size(); }
  const std::vector<uint8_t>& vec() const { return b_; }
  operator std::vector<uint8_t>() const { return b_; }  // NOLINT: convenience

 private:
  std::vector<uint8_t> b_;
};

template <typename T>
std::vector<uint8_t> ScalarBytes(T v) {
  return Bytes().Put(v).vec();
}
inline std::vector<uint8_t> StringBytes(std::string_view s) { return Bytes().Str(s).vec(); }
// Array value: element type, count, then the already-serialized items.
inline std::vector<uint8_t> ArrayBytes(ValueType elem, uint64_t count,
                                       const std::vector<uint8_t>& items) {
  return Bytes().Type(elem).U64(count).Append(items).vec();
}

template <typename T>
void Poke(std::vector<uint8_t>* b, size_t off, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (off + sizeof(T) > b->size()) {
    ADD_FAILURE() << "Poke at " << off << " past the end of a " << b->size() << "-byte buffer";
    return;
  }
  std::memcpy(b->data() + off, &v, sizeof(T));
}

template <typename T>
T Peek(const std::vector<uint8_t>& b, size_t off) {
  T v{};
  if (off + sizeof(T) > b.size()) {
    ADD_FAILURE() << "Peek at " << off << " past the end of a " << b.size() << "-byte buffer";
    return v;
  }
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

inline size_t ScalarSize(uint32_t t) {
  switch (ValueType(t)) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool:
      return 1;
    case ValueType::kU16:
    case ValueType::kI16:
      return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32:
      return 4;
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64:
      return 8;
    default:
      return 0;
  }
}

// ---- field locator for well-formed files ------------------------------------------------------

inline constexpr size_t kVersionOff = 4;
inline constexpr size_t kTensorCountOff = 8;
inline constexpr size_t kKvCountOff = 16;
inline constexpr size_t kHeaderEnd = 24;

struct KvField {
  std::string key;
  uint32_t type = 0;
  size_t key_off = 0;    // the key's uint64 length
  size_t type_off = 0;   // the uint32 value type
  size_t value_off = 0;  // the value (for strings: its length; arrays: the element type)
  size_t end = 0;        // one past the value
};

struct TensorField {
  std::string name;
  uint32_t n_dims = 0;
  size_t name_off = 0;  // the name's uint64 length
  size_t ndims_off = 0;
  size_t ne_off = 0;  // ne[0]; ne[d] at ne_off + 8 d
  size_t type_off = 0;
  size_t offset_off = 0;
  size_t end = 0;
  uint64_t offset = 0;  // as stored
};

struct Layout {
  bool ok = false;
  uint64_t alignment = 32;
  std::vector<KvField> kvs;
  std::vector<TensorField> tensors;
  size_t infos_end = 0;  // one past the last tensor info
  size_t data_off = 0;   // start of the data section

  const KvField& Kv(std::string_view key) const {
    for (const KvField& k : kvs)
      if (k.key == key) return k;
    ADD_FAILURE() << "no key " << key << " in layout";
    static const KvField kNone;
    return kNone;
  }
  const TensorField& Tensor(std::string_view name) const {
    for (const TensorField& t : tensors)
      if (t.name == name) return t;
    ADD_FAILURE() << "no tensor " << name << " in layout";
    static const TensorField kNone;
    return kNone;
  }
};

// Skips one value of type t starting at pos; returns the position after it.
inline size_t SkipValue(const std::vector<uint8_t>& b, size_t pos, uint32_t t) {
  if (t == uint32_t(ValueType::kString)) return pos + 8 + size_t(Peek<uint64_t>(b, pos));
  if (t == uint32_t(ValueType::kArray)) {
    uint32_t et = Peek<uint32_t>(b, pos);
    uint64_t n = Peek<uint64_t>(b, pos + 4);
    pos += 12;
    if (size_t es = ScalarSize(et)) return pos + size_t(n) * es;
    for (uint64_t k = 0; k < n && pos < b.size(); ++k) pos = SkipValue(b, pos, et);
    return pos;
  }
  return pos + ScalarSize(t);
}

// Walks a file known to be well-formed (written by the Writer or by hand) and records where
// every field lies. Independent of the reader under test.
inline Layout Scan(const std::vector<uint8_t>& b) {
  Layout L;
  if (b.size() < kHeaderEnd || std::memcmp(b.data(), "GGUF", 4) != 0) return L;
  const uint64_t n_tensors = Peek<uint64_t>(b, kTensorCountOff);
  const uint64_t n_kv = Peek<uint64_t>(b, kKvCountOff);
  size_t pos = kHeaderEnd;
  for (uint64_t k = 0; k < n_kv; ++k) {
    KvField f;
    f.key_off = pos;
    uint64_t len = Peek<uint64_t>(b, pos);
    if (pos + 8 + len > b.size()) return L;
    f.key.assign(reinterpret_cast<const char*>(b.data() + pos + 8), size_t(len));
    f.type_off = pos + 8 + size_t(len);
    f.type = Peek<uint32_t>(b, f.type_off);
    f.value_off = f.type_off + 4;
    f.end = SkipValue(b, f.value_off, f.type);
    if (f.end > b.size()) return L;
    if (f.key == "general.alignment" && ScalarSize(f.type) > 0) {
      uint64_t a = 0;
      std::memcpy(&a, b.data() + f.value_off, ScalarSize(f.type));
      L.alignment = a;
    }
    pos = f.end;
    L.kvs.push_back(std::move(f));
  }
  for (uint64_t t = 0; t < n_tensors; ++t) {
    TensorField f;
    f.name_off = pos;
    uint64_t len = Peek<uint64_t>(b, pos);
    if (pos + 8 + len > b.size()) return L;
    f.name.assign(reinterpret_cast<const char*>(b.data() + pos + 8), size_t(len));
    f.ndims_off = pos + 8 + size_t(len);
    f.n_dims = Peek<uint32_t>(b, f.ndims_off);
    f.ne_off = f.ndims_off + 4;
    f.type_off = f.ne_off + 8 * size_t(f.n_dims);
    f.offset_off = f.type_off + 4;
    f.offset = Peek<uint64_t>(b, f.offset_off);
    f.end = f.offset_off + 8;
    if (f.end > b.size()) return L;
    pos = f.end;
    L.tensors.push_back(std::move(f));
  }
  L.infos_end = pos;
  if (L.alignment == 0) return L;
  L.data_off = size_t((pos + L.alignment - 1) / L.alignment * L.alignment);
  L.ok = true;
  return L;
}

// ---- a small valid file -----------------------------------------------------------------------

// Deterministic filler bytes.
inline std::vector<uint8_t> PatternBytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = uint8_t(x >> 24);
  }
  return v;
}

// A small well-formed v3 file (about 600 bytes) with several value types and three tensors:
//   t0 F32 {8, 2}, t1 Q8_0 {32, 2}, t2 F16 {4, 3, 2, 2}.
// Keys test.k0 / test.k1 and tensors t0 / t1 have equal-length names so tests can make
// duplicates by patching one byte.
inline std::vector<uint8_t> SmallValidFile() {
  const std::vector<uint8_t> d0 = PatternBytes(RowBytes(GgmlType::kF32, 8) * 2, 1);
  const std::vector<uint8_t> d1 = PatternBytes(RowBytes(GgmlType::kQ8_0, 32) * 2, 2);
  const std::vector<uint8_t> d2 = PatternBytes(RowBytes(GgmlType::kF16, 4) * 12, 3);
  gguf::Writer w;
  w.SetString("general.architecture", "qwen2");
  w.SetU32("general.alignment", 32);
  w.SetU32("test.k0", 7);
  w.SetU32("test.k1", 9);
  w.SetString("test.str", "hello world");
  w.SetStringArray("tokenizer.ggml.tokens", std::vector<std::string>{"a", "bc", "def"});
  w.SetF32Array("test.f32s", {1.5f, -2.0f, 3.25f});
  w.SetI32Array("test.i32s", {1, -2, 3});
  w.SetBool("test.flag", true);
  w.AddTensor("t0", GgmlType::kF32, {8, 2}, d0.data(), d0.size());
  w.AddTensor("t1", GgmlType::kQ8_0, {32, 2}, d1.data(), d1.size());
  w.AddTensor("t2", GgmlType::kF16, {4, 3, 2, 2}, d2.data(), d2.size());
  return w.Serialize();
}

// ---- assertions -------------------------------------------------------------------------------

// Passes when `r` is an error whose message contains at least one of `needles`.
inline ::testing::AssertionResult FailsWith(const Result<gguf::File>& r,
                                            std::initializer_list<std::string_view> needles) {
  std::string want;
  for (std::string_view n : needles)
    want += (want.empty() ? "\"" : " or \"") + std::string(n) + "\"";
  if (r.ok())
    return ::testing::AssertionFailure()
           << "opened successfully; expected an error naming " << want;
  const std::string& m = r.message();
  for (std::string_view n : needles)
    if (m.find(n) != std::string::npos) return ::testing::AssertionSuccess() << m;
  return ::testing::AssertionFailure() << "error \"" << m << "\" names none of " << want;
}

// ---- fixture ----------------------------------------------------------------------------------

class GgufFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = brisk::test::TempDir();
    ASSERT_FALSE(dir_.empty()) << "cannot create a temporary directory";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  // Writes bytes to a fresh file (a new inode each time, so a File still mapping an earlier
  // version is never disturbed) and returns its path.
  std::string WriteBytes(const std::vector<uint8_t>& bytes, const std::string& name = "") {
    std::string path =
        dir_ + "/" + (name.empty() ? "f" + std::to_string(counter_++) : name) + ".gguf";
    std::error_code ec;
    std::filesystem::remove(path, ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    out.close();
    EXPECT_TRUE(out.good()) << "cannot write " << path;
    return path;
  }
  // Opens bytes as a file, and also parses them with File::FromBuffer from an exact-size heap
  // copy: both must agree, and under ASan any read past the end of the heap copy is caught
  // (reads past the end of a mapping are not). Returns the file-backed result.
  Result<gguf::File> OpenBytes(const std::vector<uint8_t>& bytes) {
    const std::string path = WriteBytes(bytes);
    Result<gguf::File> f = gguf::File::Open(path);
    std::unique_ptr<uint8_t[]> heap(new uint8_t[bytes.size()]);
    if (!bytes.empty()) std::memcpy(heap.get(), bytes.data(), bytes.size());
    Result<gguf::File> g = gguf::File::FromBuffer(heap.get(), bytes.size(), "<buffer>");
    EXPECT_EQ(f.ok(), g.ok()) << (f.ok() ? g.message() : f.message());
    if (!f.ok() && !g.ok()) {
      // Same message after the name: "<path>: GGUF: ..." vs "<buffer>: GGUF: ...".
      EXPECT_EQ(f.message().substr(std::min(path.size(), f.message().size())),
                g.message().substr(std::min<size_t>(8, g.message().size())));
    }
    if (g.ok()) last_buffer_checksum_ += Touch(*g);
    return f;
  }
  // Reads every byte the File points at (strings, array items, tensor data).
  static uint64_t Touch(const gguf::File& f) {
    uint64_t sum = 0;
    for (const auto& [key, v] : f.metadata()) {
      for (char c : v.str) sum += uint8_t(c);
      for (size_t i = 0; i < v.raw_bytes; ++i) sum += v.raw[i];
    }
    for (const gguf::TensorInfo& t : f.tensors())
      for (uint64_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
    return sum;
  }

  uint64_t last_buffer_checksum_ = 0;

  std::string dir_;
  int counter_ = 0;
};

}  // namespace brisk::gguf_test
