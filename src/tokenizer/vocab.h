// Token storage: the text of every token as the vocabulary stores it, its raw bytes (the
// byte-level alphabet undone), its type, and a text -> id hash index.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab_spec.h"

namespace brisk::tok {

uint64_t HashBytes(const char* p, size_t n);

class Vocab {
 public:
  void Build(const VocabSpec& spec);

  int32_t size() const { return static_cast<int32_t>(types_.size()); }
  bool Valid(int32_t id) const { return id >= 0 && id < size(); }
  std::string_view Text(int32_t id) const {
    return std::string_view(text_.data() + text_off_[id], text_off_[id + 1] - text_off_[id]);
  }
  std::string_view Bytes(int32_t id) const {
    return std::string_view(bytes_.data() + bytes_off_[id], bytes_off_[id + 1] - bytes_off_[id]);
  }
  TokenType Type(int32_t id) const { return types_[id]; }
  // The id of the token with this text, or -1. When several share a text, the last one wins.
  int32_t Find(std::string_view text) const;
  // Find for many keys at once, overlapping their cache misses (construction speed).
  void FindMany(const std::string_view* keys, size_t n, int32_t* ids) const;

 private:
  std::string text_;
  std::vector<uint32_t> text_off_;
  std::string bytes_;
  std::vector<uint32_t> bytes_off_;
  std::vector<TokenType> types_;
  // Open addressing. A slot holds the text's place in text_ so that a probe touches the slot
  // and the text only; tag = high bits of the hash for quick rejects.
  struct Slot {
    uint32_t id1;  // id + 1; 0 = empty
    uint32_t tag;
    uint32_t off;
    uint32_t len;
  };
  bool SlotIs(const Slot& s, uint32_t tag, std::string_view text) const {
    return s.tag == tag && s.len == text.size() &&
           std::memcmp(text_.data() + s.off, text.data(), text.size()) == 0;
  }
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
};

}  // namespace brisk::tok
