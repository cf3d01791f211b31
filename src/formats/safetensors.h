// safetensors reader over mmap, and the sharding index (model.safetensors.index.json).
//
// Format: uint64 little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "BF16", "shape": [rows, cols], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value"}}
// then the tensor data; offsets are relative to the data start (8 + N). Everything read from the
// file is untrusted: the header length, the JSON, every dtype, shape and offset range is checked
// (in range, size == elements x dtype size, no two tensors overlapping) before a pointer into the
// mapping is handed out. Errors name the file, the tensor and the problem. No exceptions escape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quant/types.h"
#include "util/mapped_file.h"
#include "util/status.h"

namespace brisk::safetensors {

enum class Dtype : uint8_t {
  kBool,
  kU8,
  kI8,
  kF8_E5M2,
  kF8_E4M3,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kF64,
  kI64,
  kU64,
};

std::string_view DtypeName(Dtype d);  // "BF16", "F32", ... as in the file
size_t DtypeSize(Dtype d);            // bytes per element
bool ParseDtype(std::string_view s, Dtype* out);
// The ggml type of the float dtypes brisk computes with (F32, F16, BF16); false otherwise.
bool DtypeToGgml(Dtype d, GgmlType* out);
// The reverse (F32, F16, BF16 only).
bool GgmlToDtype(GgmlType t, Dtype* out);

// Largest header accepted (the reference implementation's limit).
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;
inline constexpr int kMaxRank = 8;

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<int64_t> shape;  // outermost first: a [out, in] matrix has rows of `in` values
  int64_t n_elements = 0;
  uint64_t begin = 0, end = 0;    // relative to the data section
  const uint8_t* data = nullptr;  // inside the mapping, validated to lie within the file
  size_t nbytes() const { return size_t(end - begin); }
};

class File {
 public:
  static Result<File> Open(const std::string& path);
  // Parses an image already in memory (not copied: `data` must outlive the File). `name` is used
  // in error messages.
  static Result<File> FromBuffer(const uint8_t* data, size_t size, const std::string& name);

  const std::string& path() const { return path_; }
  size_t file_size() const { return size_; }
  uint64_t data_offset() const { return data_offset_; }  // 8 + header length

  // Tensors in the order of their data offsets.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* Find(std::string_view name) const;
  // "__metadata__" (string -> string), sorted by key.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // MappedFile::DropPages on the file's mapping (nothing for FromBuffer).
  void DropPages(const uint8_t* p, size_t n) const {
    if (map_) map_->DropPages(p, n);
  }

 private:
  static Result<File> Parse(File f, const uint8_t* data, size_t size);

  std::string path_;
  std::unique_ptr<MappedFile> map_;  // null for FromBuffer; on the heap so moves keep pointers
  size_t size_ = 0;
  uint64_t data_offset_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// model.safetensors.index.json: {"metadata": {...}, "weight_map": {"tensor": "shard file"}}.
struct ShardIndex {
  std::map<std::string, std::string> weight_map;  // tensor name -> shard file name
  std::vector<std::string> shards;                // distinct shard names, sorted
};

// Shard names must be plain file names (no directories, no ".."): the index is untrusted.
Result<ShardIndex> ParseIndex(std::string_view json_text, const std::string& origin);
Result<ShardIndex> ReadIndex(const std::string& path);

}  // namespace brisk::safetensors
