#include "kvevents/msgpack.h"

#include <bit>

namespace brisk::msgpack {

void Writer::BigEndian(uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out_.push_back(char(uint8_t(v >> (8 * i))));
}

void Writer::Uint(uint64_t v) {
  if (v < 0x80) {  // positive fixint
    out_.push_back(char(v));
  } else if (v <= 0xff) {
    out_.push_back(char(0xcc));
    BigEndian(v, 1);
  } else if (v <= 0xffff) {
    out_.push_back(char(0xcd));
    BigEndian(v, 2);
  } else if (v <= 0xffffffffULL) {
    out_.push_back(char(0xce));
    BigEndian(v, 4);
  } else {
    out_.push_back(char(0xcf));
    BigEndian(v, 8);
  }
}

void Writer::Int(int64_t v) {
  if (v >= 0) return Uint(uint64_t(v));  // non-negative values use the unsigned forms
  if (v >= -32) {                        // negative fixint: 111xxxxx
    out_.push_back(char(int8_t(v)));
  } else if (v >= INT8_MIN) {
    out_.push_back(char(0xd0));
    BigEndian(uint64_t(v), 1);
  } else if (v >= INT16_MIN) {
    out_.push_back(char(0xd1));
    BigEndian(uint64_t(v), 2);
  } else if (v >= INT32_MIN) {
    out_.push_back(char(0xd2));
    BigEndian(uint64_t(v), 4);
  } else {
    out_.push_back(char(0xd3));
    BigEndian(uint64_t(v), 8);
  }
}

void Writer::Float64(double v) {
  out_.push_back(char(0xcb));
  BigEndian(std::bit_cast<uint64_t>(v), 8);
}

void Writer::Str(std::string_view s) {
  const uint64_t n = s.size();
  if (n < 32) {  // fixstr: 101xxxxx
    out_.push_back(char(0xa0 | n));
  } else if (n <= 0xff) {
    out_.push_back(char(0xd9));
    BigEndian(n, 1);
  } else if (n <= 0xffff) {
    out_.push_back(char(0xda));
    BigEndian(n, 2);
  } else {
    out_.push_back(char(0xdb));
    BigEndian(n, 4);
  }
  out_.append(s);
}

void Writer::Bin(std::string_view bytes) {
  const uint64_t n = bytes.size();
  if (n <= 0xff) {
    out_.push_back(char(0xc4));
    BigEndian(n, 1);
  } else if (n <= 0xffff) {
    out_.push_back(char(0xc5));
    BigEndian(n, 2);
  } else {
    out_.push_back(char(0xc6));
    BigEndian(n, 4);
  }
  out_.append(bytes);
}

void Writer::ArrayHeader(uint32_t n) {
  if (n < 16) {  // fixarray: 1001xxxx
    out_.push_back(char(0x90 | n));
  } else if (n <= 0xffff) {
    out_.push_back(char(0xdc));
    BigEndian(n, 2);
  } else {
    out_.push_back(char(0xdd));
    BigEndian(n, 4);
  }
}

}  // namespace brisk::msgpack
