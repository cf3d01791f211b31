// The Qwen2 / Qwen2.5 / Qwen3 tokenizer: byte-level BPE, identical to HuggingFace `tokenizers`
// for these vocabularies (DESIGN §4 "Tokenizer").
//
// Encode: (1) added tokens are split out of the raw text (exact match, leftmost-longest);
// (2) the text between them is NFC-normalised; (3) split by the Qwen2 pre-tokenizer regex;
// (4)+(5) each piece's bytes go through BPE. No BOS is added (see add_bos()).
//
// Invalid UTF-8 input never fails: each maximal ill-formed subsequence is replaced by U+FFFD
// first (as Python's bytes.decode(errors="replace") and Rust's String::from_utf8_lossy do, which
// is what HF sees when a client's bytes are decoded leniently). Decode output is always valid
// UTF-8: token bytes that do not form valid UTF-8 are replaced the same way, exactly like HF's
// ByteLevel decoder.
//
// A Tokenizer is immutable after construction; Encode/Decode are safe to call from any number of
// threads at once (each thread that encodes keeps a 256 KiB cache of recent pieces, no locks).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/vocab.h"
#include "tokenizer/vocab_spec.h"
#include "util/status.h"

namespace brisk {

namespace gguf {
class File;
}

class Tokenizer {
 public:
  // From GGUF metadata: tokenizer.ggml.{model="gpt2", pre="qwen2"|"deepseek-r1-qwen", tokens,
  // token_type, merges, bos/eos/padding_token_id, add_bos_token}.
  static Result<Tokenizer> FromGguf(const gguf::File& file);
  static Result<Tokenizer> FromGgufPath(const std::string& path);
  // From a HF tokenizer.json. bos/eos/pad and add_bos_token come from a tokenizer_config.json in
  // the same directory when there is one; otherwise eos is <|endoftext|> when present.
  static Result<Tokenizer> FromHfJson(const std::string& path);
  // The same from JSON text (config_json may be empty). `origin` names the source in errors.
  static Result<Tokenizer> FromHfJsonText(std::string_view json, std::string_view config_json = {},
                                          const std::string& origin = "tokenizer.json");
  // From an already decoded description (what the loaders build; also handy for tests).
  static Result<Tokenizer> FromSpec(const tok::VocabSpec& spec);

  // Token ids of `text`. With parse_special = false, control (special) tokens are not split out
  // of the text and are encoded as ordinary text; user-defined added tokens such as <tool_call>
  // still are (HF split_special_tokens / llama.cpp parse_special semantics).
  std::vector<int32_t> Encode(std::string_view text, bool parse_special = true) const;
  // Appends to *out.
  void Encode(std::string_view text, bool parse_special, std::vector<int32_t>* out) const;

  // Text of `ids` (valid UTF-8). Ids out of range and unused ([PADn]) rows produce nothing;
  // control tokens are written as their text when show_special, else left out.
  std::string Decode(std::span<const int32_t> ids, bool show_special = true) const;
  // The bytes one id contributes to Decode (possibly part of a UTF-8 sequence; empty for ids
  // that Decode leaves out).
  std::string_view PieceBytes(int32_t id, bool show_special = true) const;

  int32_t n_vocab() const { return vocab_.size(); }
  size_t n_merges() const { return bpe_.merges().size(); }
  // The token as the vocabulary stores it (byte-level alphabet for BPE tokens: "Ġhello");
  // empty for out-of-range ids.
  std::string_view TokenText(int32_t id) const;
  // The raw bytes of a token ("Ġhello" -> " hello"); empty for out-of-range and unused ids.
  std::string_view TokenBytes(int32_t id) const;
  // Id of the token stored as `text` (byte-level alphabet for BPE tokens), or -1.
  int32_t TokenToId(std::string_view text) const { return vocab_.Find(text); }
  TokenType type(int32_t id) const;
  // Control tokens (HF special=true): what Decode(show_special=false) hides.
  bool IsSpecial(int32_t id) const { return type(id) == TokenType::kControl; }
  // End of generation: eos, <|im_end|>, <|endoftext|>.
  bool IsEog(int32_t id) const;
  const std::vector<int32_t>& eog_ids() const { return eog_ids_; }

  int32_t eos_id() const { return eos_id_; }
  int32_t bos_id() const { return bos_id_; }
  int32_t pad_id() const { return pad_id_; }
  bool add_bos() const { return add_bos_; }
  bool normalizes_nfc() const { return nfc_; }
  // The BPE stage alone (tests, tools).
  const tok::BpeModel& bpe_model() const { return bpe_; }

 private:
  static Result<Tokenizer> FromHfJsonTextUnchecked(std::string_view json,
                                                   std::string_view config_json,
                                                   const std::string& origin);
  // FromSpec's last steps: the added-token matchers, then bos/eos/pad and end-of-generation ids.
  void AddAddedTokens(const tok::VocabSpec& spec);
  void SetSpecialIds(const tok::VocabSpec& spec);
  void EncodeSegment(std::string_view raw, bool parse_special, std::vector<int32_t>* out) const;
  void EncodeNormalized(std::string_view text, std::vector<int32_t>* out) const;

  tok::Vocab vocab_;
  tok::BpeModel bpe_;
  // Added tokens matched on the raw text / after NFC; "all" with control tokens, "plain" without.
  tok::AddedTokenMatcher raw_all_, raw_plain_, norm_all_, norm_plain_;
  bool nfc_ = true;
  bool ignore_merges_ = false;
  int32_t bos_id_ = -1, eos_id_ = -1, pad_id_ = -1;
  bool add_bos_ = false;
  std::vector<int32_t> eog_ids_;
};

}  // namespace brisk
