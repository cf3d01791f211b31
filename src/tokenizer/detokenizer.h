// Streaming detokenizer: token ids in one at a time, text out, never a partial UTF-8 sequence.
// Bytes of an incomplete trailing sequence are held back until the next token completes them;
// bytes that can no longer form valid UTF-8 become U+FFFD right away. The concatenation of all
// pieces and Flush() equals Tokenizer::Decode of the whole sequence, byte for byte.
#pragma once

#include <cstdint>
#include <string>

#include "tokenizer/tokenizer.h"

namespace brisk {

class StreamingDetokenizer {
 public:
  // `tokenizer` must outlive this object.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool show_special = true)
      : tok_(&tokenizer), show_special_(show_special) {}

  // Appends the text that `id` completes to *out; returns the number of bytes appended.
  size_t Push(int32_t id, std::string* out);
  std::string Push(int32_t id);
  // Emits what is held back (an incomplete sequence becomes U+FFFD) and resets.
  size_t Flush(std::string* out);
  std::string Flush();
  void Reset() { pending_.clear(); }
  // Bytes held back (0..3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tok_;
  bool show_special_;
  std::string pending_;
};

}  // namespace brisk
