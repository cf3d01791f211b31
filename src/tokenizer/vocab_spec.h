// The plain description of a vocabulary that the loaders (GGUF metadata, HF tokenizer.json)
// produce and Tokenizer::FromSpec turns into lookup tables.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace brisk {

// Token types as GGUF numbers them (tokenizer.ggml.token_type).
enum class TokenType : uint8_t {
  kUndefined = 0,
  kNormal = 1,  // a BPE token, stored in the byte-level alphabet
  kUnknown = 2,
  kControl = 3,      // special added token (<|im_start|>): split out of text, hidden on request
  kUserDefined = 4,  // non-special added token (<tool_call>): split out of text, always shown
  kUnused = 5,       // padding rows ([PAD151665]): never matched, decode to nothing
  kByte = 6,
};

namespace tok {

// Views point into the loader's source (the GGUF mapping or the parsed JSON) and need to stay
// valid only while Tokenizer::FromSpec runs.
struct VocabSpec {
  std::vector<std::string_view> tokens;  // id -> text ("" for ids without a token)
  std::vector<TokenType> types;          // id -> type (same size as tokens)
  // Per id (empty = all false): added tokens matched after NFC normalisation instead of on the
  // raw text (HF "normalized": true). GGUF added tokens are all matched on the raw text.
  std::vector<uint8_t> added_normalized;
  // (left, right) in rank order: merges[0] is applied first.
  std::vector<std::pair<std::string_view, std::string_view>> merges;
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t pad_id = -1;
  bool add_bos = false;
  bool nfc = true;             // NFC-normalise text before pre-tokenising
  bool ignore_merges = false;  // HF BPE option: a piece that is a whole token is taken as is
};

}  // namespace tok
}  // namespace brisk
