// safetensors writer: tensors laid out back to back in insertion order after a JSON header
// padded with spaces to a multiple of 8 bytes (as the reference implementation writes it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "formats/safetensors.h"
#include "util/status.h"

namespace brisk::safetensors {

class Writer {
 public:
  void SetMetadata(std::string key, std::string value) {
    metadata_[std::move(key)] = std::move(value);
  }
  // Adds a tensor; `data` must stay valid until Write()/Serialize() return. `shape` is outermost
  // first; nbytes must equal the element count times the dtype size (BRISK_CHECKed).
  void AddTensor(std::string_view name, Dtype dtype, const std::vector<int64_t>& shape,
                 const void* data, size_t nbytes);

  // The JSON header including its 8-byte length prefix and padding.
  Result<std::vector<uint8_t>> Header() const;
  // The whole file in memory.
  Result<std::vector<uint8_t>> Serialize() const;
  // Writes the file (to a temporary name, renamed into place on success).
  Status Write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    Dtype dtype;
    std::vector<int64_t> shape;
    const void* data;
    size_t nbytes;
  };
  std::vector<Tensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace brisk::safetensors
