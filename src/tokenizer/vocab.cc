#include "tokenizer/vocab.h"

#include <algorithm>
#include <cstring>

#include "tokenizer/byte_level.h"
#include "util/check.h"

namespace brisk::tok {

namespace {

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// 64x64 -> 128 bit multiply, folded.
inline uint64_t Mix(uint64_t a, uint64_t b) {
  const __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

}  // namespace

// Short keys (tokens are mostly < 16 bytes) are read with at most two overlapping loads, so no
// byte loop and no variable-length memcpy.
uint64_t HashBytes(const char* p, size_t n) {
  constexpr uint64_t k0 = 0xA0761D6478BD642Full, k1 = 0xE7037ED1A0B428DBull,
                     k2 = 0x8EBC6AF09C88C6E3ull;
  uint64_t seed = k0 ^ n;
  uint64_t a, b;
  if (n <= 16) {
    if (n >= 8) {
      a = Load64(p);
      b = Load64(p + n - 8);
    } else if (n >= 4) {
      a = Load32(p);
      b = Load32(p + n - 4);
    } else if (n > 0) {
      a = (uint64_t{static_cast<uint8_t>(p[0])} << 16) |
          (uint64_t{static_cast<uint8_t>(p[n >> 1])} << 8) | static_cast<uint8_t>(p[n - 1]);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    size_t i = 0;
    for (; i + 16 < n; i += 16) seed = Mix(Load64(p + i) ^ k1, Load64(p + i + 8) ^ seed);
    a = Load64(p + n - 16);
    b = Load64(p + n - 8);
  }
  return Mix(k1 ^ n, Mix(a ^ k1, b ^ seed) ^ k2);
}

namespace {

// Raw bytes of a byte-level token text written to `out` (room for text.size() bytes); returns
// how many. Tokens with a character outside the alphabet keep their own text (as HF does).
size_t TokenBytes(std::string_view text, char* out) {
  size_t o = 0;
  for (size_t i = 0; i < text.size();) {
    const uint8_t b0 = static_cast<uint8_t>(text[i]);
    int byte = -1;
    size_t len = 1;
    if (b0 < 0x80) {
      byte = UnicodeToByte(b0);
    } else if (b0 >= 0xC2 && b0 <= 0xC5 && i + 1 < text.size()) {  // U+0080..U+017F
      const uint8_t b1 = static_cast<uint8_t>(text[i + 1]);
      if ((b1 & 0xC0) == 0x80) {
        byte = UnicodeToByte(((b0 & 0x1Fu) << 6) | (b1 & 0x3Fu));
        len = 2;
      }
    }
    if (byte < 0) {  // not in the alphabet
      std::memcpy(out, text.data(), text.size());
      return text.size();
    }
    out[o++] = static_cast<char>(byte);
    i += len;
  }
  return o;
}

}  // namespace

void Vocab::Build(const VocabSpec& spec) {
  const size_t n = spec.tokens.size();
  BRISK_CHECK(spec.types.size() == n);
  types_ = spec.types;
  size_t total = 0;
  for (std::string_view t : spec.tokens) total += t.size();
  // Both arenas are written through raw pointers (bytes are never longer than the text).
  text_.resize(total);
  bytes_.resize(total);
  text_off_.resize(n + 1);
  bytes_off_.resize(n + 1);
  text_off_[0] = bytes_off_[0] = 0;
  char* text_out = text_.data();
  char* bytes_out = bytes_.data();
  size_t t_off = 0, b_off = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view t = spec.tokens[i];
    if (!t.empty()) std::memcpy(text_out + t_off, t.data(), t.size());
    t_off += t.size();
    text_off_[i + 1] = static_cast<uint32_t>(t_off);
    const TokenType ty = types_[i];
    if (ty != TokenType::kUnused && ty != TokenType::kUndefined) {
      b_off += TokenBytes(t, bytes_out + b_off);
    }
    bytes_off_[i + 1] = static_cast<uint32_t>(b_off);
  }
  bytes_.resize(b_off);

  size_t cap = 16;
  while (cap < n + n / 2) cap <<= 1;  // load <= 2/3
  mask_ = cap - 1;
  slots_.assign(cap, Slot{0, 0, 0, 0});
  // Hashes first, then inserts that prefetch the slot kAhead tokens ahead.
  std::vector<uint64_t> hashes(n);
  for (size_t i = 0; i < n; ++i)
    hashes[i] = HashBytes(text_.data() + text_off_[i], text_off_[i + 1] - text_off_[i]);
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&slots_[hashes[i + kAhead] & mask_], 1);
    const std::string_view t = Text(static_cast<int32_t>(i));
    if (t.empty()) continue;
    const uint32_t tag = static_cast<uint32_t>(hashes[i] >> 32);
    for (uint64_t s = hashes[i] & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.id1 == 0) {
        slot =
            Slot{static_cast<uint32_t>(i + 1), tag, text_off_[i], static_cast<uint32_t>(t.size())};
        break;
      }
      if (SlotIs(slot, tag, t)) {
        slot.id1 = static_cast<uint32_t>(i + 1);  // duplicate text: the last id wins
        break;
      }
    }
  }
}

int32_t Vocab::Find(std::string_view text) const {
  if (slots_.empty() || text.empty()) return -1;
  const uint64_t h = HashBytes(text.data(), text.size());
  const uint32_t tag = static_cast<uint32_t>(h >> 32);
  for (uint64_t s = h & mask_;; s = (s + 1) & mask_) {
    const Slot& slot = slots_[s];
    if (slot.id1 == 0) return -1;
    if (SlotIs(slot, tag, text)) return static_cast<int32_t>(slot.id1 - 1);
  }
}

void Vocab::FindMany(const std::string_view* keys, size_t n, int32_t* ids) const {
  if (slots_.empty()) {
    for (size_t i = 0; i < n; ++i) ids[i] = -1;
    return;
  }
  // Three stages kAhead apart: hash + prefetch the home slot; prefetch the text it points to;
  // compare. Each key's two cache misses overlap with other keys' work.
  constexpr size_t kAhead = 8;
  constexpr size_t kBlock = 512;
  uint64_t hashes[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t m = std::min(kBlock, n - base);
    const std::string_view* k = keys + base;
    for (size_t i = 0; i < m; ++i) hashes[i] = HashBytes(k[i].data(), k[i].size());
    for (size_t i = 0; i < std::min(m, 2 * kAhead); ++i)
      __builtin_prefetch(&slots_[hashes[i] & mask_]);
    for (size_t i = 0; i < std::min(m, kAhead); ++i) {
      __builtin_prefetch(text_.data() + slots_[hashes[i] & mask_].off);
    }
    for (size_t i = 0; i < m; ++i) {
      if (i + 2 * kAhead < m) __builtin_prefetch(&slots_[hashes[i + 2 * kAhead] & mask_]);
      if (i + kAhead < m) __builtin_prefetch(text_.data() + slots_[hashes[i + kAhead] & mask_].off);
      const std::string_view text = k[i];
      const uint32_t tag = static_cast<uint32_t>(hashes[i] >> 32);
      int32_t id = -1;
      if (!text.empty()) {
        for (uint64_t s = hashes[i] & mask_;; s = (s + 1) & mask_) {
          const Slot& slot = slots_[s];
          if (slot.id1 == 0) break;
          if (SlotIs(slot, tag, text)) {
            id = static_cast<int32_t>(slot.id1 - 1);
            break;
          }
        }
      }
      ids[base + i] = id;
    }
  }
}

}  // namespace brisk::tok
