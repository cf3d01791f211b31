// The few MessagePack types the KV-event wire format needs (https://msgpack.org/ spec: nil,
// unsigned and signed integers, float64, str, bin, array headers), appended to a byte string.
// Every value takes its shortest encoding, as the spec asks of serializers and as msgspec (what
// vLLM encodes with) does, so brisk's payloads are byte-identical to vLLM's for the same values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace brisk::msgpack {

class Writer {
 public:
  void Nil() { out_.push_back(char(0xc0)); }
  void Uint(uint64_t v);
  void Int(int64_t v);
  void Float64(double v);
  void Str(std::string_view s);
  void Bin(std::string_view bytes);
  // An array of n elements: the next n values written are its elements.
  void ArrayHeader(uint32_t n);

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BigEndian(uint64_t v, int bytes);  // the low `bytes` bytes of v, most significant first
  std::string out_;
};

}  // namespace brisk::msgpack
