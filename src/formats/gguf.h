// GGUF reader over mmap (versions 2 and 3). Everything read from the file is untrusted: every
// count, length and offset is checked against the file size before use, and a failure returns a
// Status naming the problem and its byte offset. Metadata arrays are kept as views into the
// mapping and decoded on request, so opening a 400 MB file reads only its header.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quant/types.h"
#include "util/mapped_file.h"
#include "util/status.h"

namespace brisk::gguf {

enum class ValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};
std::string_view ValueTypeName(ValueType t);

inline constexpr int kMaxDims = 4;
inline constexpr uint64_t kDefaultAlignment = 32;

// One metadata value. Scalars are decoded; strings and arrays point into the mapping.
struct Value {
  ValueType type = ValueType::kU8;
  uint64_t u = 0;  // unsigned integers and bool
  int64_t i = 0;   // signed integers
  double f = 0;    // f32 / f64
  std::string_view str;
  // Arrays: element type, count, and the raw bytes of the items.
  ValueType elem_type = ValueType::kU8;
  uint64_t count = 0;
  const uint8_t* items = nullptr;
  size_t items_bytes = 0;
  // The serialized value (type tag excluded), for copying into a writer unchanged.
  const uint8_t* raw = nullptr;
  size_t raw_bytes = 0;

  bool IsInteger() const;
  std::string ToString(size_t max_items = 8) const;  // human-readable (brisk info)
};

struct TensorInfo {
  std::string name;
  int n_dims = 0;
  int64_t ne[kMaxDims] = {1, 1, 1, 1};  // ne[0] is the contiguous dimension
  GgmlType type = GgmlType::kF32;
  uint64_t offset = 0;  // relative to the data section
  uint64_t nbytes = 0;
  int64_t n_elements = 0;
  const uint8_t* data = nullptr;  // inside the mapping, validated to lie within the file
  int64_t rows() const { return n_elements / ne[0]; }
};

class File {
 public:
  static Result<File> Open(const std::string& path);
  // Parses a GGUF image already in memory (e.g. embedded in the binary). Not copied: `data`
  // must outlive the File. `name` is used in error messages.
  static Result<File> FromBuffer(const uint8_t* data, size_t size, const std::string& name);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::string& path() const { return path_; }
  size_t file_size() const { return size_; }
  uint64_t data_offset() const { return data_offset_; }

  // Metadata, in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return kvs_; }
  const Value* Find(std::string_view key) const;

  // Typed getters; the error names the key and what was found instead.
  Result<std::string> GetString(std::string_view key) const;
  Result<uint64_t> GetUInt(std::string_view key) const;  // any non-negative integer type
  Result<int64_t> GetInt(std::string_view key) const;    // any integer type
  Result<double> GetFloat(std::string_view key) const;   // f32/f64 (or an integer)
  Result<bool> GetBool(std::string_view key) const;
  Result<std::vector<std::string_view>> GetStringArray(std::string_view key) const;
  Result<std::vector<int64_t>> GetIntArray(std::string_view key) const;
  Result<std::vector<float>> GetFloatArray(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(std::string_view name) const;
  // MappedFile::DropPages on the file's mapping (nothing for FromBuffer).
  void DropPages(const uint8_t* p, size_t n) const {
    if (map_) map_->DropPages(p, n);
  }

 private:
  std::string path_;
  std::unique_ptr<MappedFile> map_;  // null for FromBuffer; heap-allocated so moves keep the
                                     // pointers of Values and tensors valid
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> kvs_;
  std::map<std::string, size_t, std::less<>> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;

  friend class Parser;
};

}  // namespace brisk::gguf
