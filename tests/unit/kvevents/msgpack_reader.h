// A msgpack reader for the tests only (brisk itself only writes msgpack): the types the KV-event
// format uses, strict (anything else, or a truncated input, is a failure).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace brisk::test {

struct MsgValue {
  enum class Type { kNil, kUint, kInt, kFloat, kStr, kBin, kArray } type = Type::kNil;
  uint64_t u = 0;  // kUint
  int64_t i = 0;   // kInt (negative values only: the shortest form of a non-negative one is uint)
  double f = 0;
  std::string s;  // kStr, kBin
  std::vector<MsgValue> a;
  bool is_nil() const { return type == Type::kNil; }
};

class MsgReader {
 public:
  explicit MsgReader(std::string_view in) : in_(in) {}
  // The whole input as one value (none if malformed or with bytes left over).
  std::optional<MsgValue> ReadAll() {
    std::optional<MsgValue> v = Read();
    if (!v || pos_ != in_.size()) return std::nullopt;
    return v;
  }

 private:
  bool Need(size_t n) const { return in_.size() - pos_ >= n; }
  uint64_t Be(int n) {
    uint64_t v = 0;
    for (int k = 0; k < n; ++k) v = (v << 8) | uint8_t(in_[pos_++]);
    return v;
  }
  std::optional<MsgValue> Bytes(MsgValue::Type t, size_t n) {
    if (!Need(n)) return std::nullopt;
    MsgValue v;
    v.type = t;
    v.s = std::string(in_.substr(pos_, n));
    pos_ += n;
    return v;
  }
  std::optional<MsgValue> Array(size_t n) {
    MsgValue v;
    v.type = MsgValue::Type::kArray;
    for (size_t k = 0; k < n; ++k) {
      std::optional<MsgValue> e = Read();
      if (!e) return std::nullopt;
      v.a.push_back(std::move(*e));
    }
    return v;
  }
  std::optional<MsgValue> Uint(int n) {
    if (!Need(size_t(n))) return std::nullopt;
    MsgValue v;
    v.type = MsgValue::Type::kUint;
    v.u = Be(n);
    return v;
  }
  std::optional<MsgValue> Int(int n) {
    if (!Need(size_t(n))) return std::nullopt;
    uint64_t raw = Be(n);
    const int shift = 64 - 8 * n;
    MsgValue v;
    v.type = MsgValue::Type::kInt;
    v.i = int64_t(raw << shift) >> shift;  // sign-extend
    return v;
  }
  std::optional<MsgValue> Read() {
    if (!Need(1)) return std::nullopt;
    const uint8_t c = uint8_t(in_[pos_++]);
    MsgValue v;
    if (c < 0x80) {
      v.type = MsgValue::Type::kUint;
      v.u = c;
      return v;
    }
    if (c >= 0xe0) {
      v.type = MsgValue::Type::kInt;
      v.i = int8_t(c);
      return v;
    }
    if ((c & 0xe0) == 0xa0) return Bytes(MsgValue::Type::kStr, c & 0x1f);
    if ((c & 0xf0) == 0x90) return Array(c & 0x0f);
    switch (c) {
      case 0xc0:
        return v;
      case 0xcc:
        return Uint(1);
      case 0xcd:
        return Uint(2);
      case 0xce:
        return Uint(4);
      case 0xcf:
        return Uint(8);
      case 0xd0:
        return Int(1);
      case 0xd1:
        return Int(2);
      case 0xd2:
        return Int(4);
      case 0xd3:
        return Int(8);
      case 0xcb: {
        if (!Need(8)) return std::nullopt;
        const uint64_t bits = Be(8);
        v.type = MsgValue::Type::kFloat;
        std::memcpy(&v.f, &bits, 8);
        return v;
      }
      case 0xd9:
      case 0xda:
      case 0xdb: {
        const int n = c == 0xd9 ? 1 : c == 0xda ? 2 : 4;
        if (!Need(size_t(n))) return std::nullopt;
        return Bytes(MsgValue::Type::kStr, size_t(Be(n)));
      }
      case 0xc4:
      case 0xc5:
      case 0xc6: {
        const int n = c == 0xc4 ? 1 : c == 0xc5 ? 2 : 4;
        if (!Need(size_t(n))) return std::nullopt;
        return Bytes(MsgValue::Type::kBin, size_t(Be(n)));
      }
      case 0xdc:
      case 0xdd: {
        const int n = c == 0xdc ? 2 : 4;
        if (!Need(size_t(n))) return std::nullopt;
        return Array(size_t(Be(n)));
      }
      default:
        return std::nullopt;
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace brisk::test
