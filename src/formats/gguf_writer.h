// GGUF writer (version 3): metadata key/values and tensors, laid out as llama.cpp expects
// (tensor data aligned to general.alignment, default 32).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/gguf.h"
#include "util/status.h"

namespace brisk::gguf {

class Writer {
 public:
  void SetU8(std::string_view key, uint8_t v);
  void SetU32(std::string_view key, uint32_t v);
  void SetI32(std::string_view key, int32_t v);
  void SetU64(std::string_view key, uint64_t v);
  void SetF32(std::string_view key, float v);
  void SetBool(std::string_view key, bool v);
  void SetString(std::string_view key, std::string_view v);
  void SetStringArray(std::string_view key, const std::vector<std::string>& v);
  void SetStringArray(std::string_view key, const std::vector<std::string_view>& v);
  void SetI32Array(std::string_view key, const std::vector<int32_t>& v);
  void SetF32Array(std::string_view key, const std::vector<float>& v);
  // Copies a value read from another file unchanged (type and bytes).
  void SetRaw(std::string_view key, const Value& v);

  // Adds a tensor; `data` must stay valid until Write() returns. dims: ne[0] first.
  // nbytes must equal the row size of the type times the rows.
  void AddTensor(std::string_view name, GgmlType type, const std::vector<int64_t>& dims,
                 const void* data, size_t nbytes);

  // Writes the file (to a temporary name, renamed into place on success).
  Status Write(const std::string& path) const;
  // Serializes the whole file into memory (tests build malformed files from this).
  std::vector<uint8_t> Serialize() const;

 private:
  struct Kv {
    std::string key;
    ValueType type;
    std::vector<uint8_t> bytes;  // serialized value without the type tag
  };
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> dims;
    const void* data;
    size_t nbytes;
  };
  void Put(std::string_view key, ValueType type, std::vector<uint8_t> bytes);
  uint64_t Alignment() const;
  std::vector<uint8_t> Header(std::vector<uint64_t>* offsets) const;

  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
};

}  // namespace brisk::gguf
