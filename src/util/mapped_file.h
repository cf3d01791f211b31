// A read-only memory-mapped file. Nothing is read eagerly: pages come in on first touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace brisk {

class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Takes the whole pages inside [p, p + n) out of this process's resident set (madvise
  // MADV_DONTNEED): for data copied elsewhere (packed weights), so the process's RSS counts it
  // once. The file's pages stay in the page cache, and a later read maps them in again with the
  // same bytes (the mapping is private and never written). Ranges outside the mapping are ignored.
  void DropPages(const uint8_t* p, size_t n) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace brisk
