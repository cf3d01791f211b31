// SHA-256 (FIPS 180-4), streaming: Update() any number of times, then Final() / FinalHex().
// Used to verify downloaded model files (`brisk pull`).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace brisk {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  // `allow_hardware`: use the x86 SHA extensions when the CPU has them (tests turn it off to
  // check the portable code).
  explicit Sha256(bool allow_hardware = true);
  void Reset();
  void Update(const void* data, size_t size);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // Finishes the hash; the object must be Reset() before it is used again.
  Digest Final();
  std::string FinalHex() { return ToHex(Final()); }

  // Lower-case hex of a digest.
  static std::string ToHex(const Digest& d);
  // One-shot helpers.
  static std::string HexOf(std::string_view data);
  // Hash of a whole file, read in chunks.
  static Result<std::string> HexOfFile(const std::string& path);
  // True when `s` is 64 hex digits (either case).
  static bool IsHexDigest(std::string_view s);
  // True when this CPU has the SHA extensions (SHA-NI) that the hardware path uses.
  static bool HardwareAvailable();

 private:
  void Blocks(const uint8_t* p, size_t n);

  bool hardware_ = false;

  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes hashed so far
};

}  // namespace brisk
