// Constrained decoding: a per-request rule about which tokens may come next (OpenAI's
// response_format {"type": "json_object"} is one). The engine samples as usual and, when the
// rule refuses the token, resamples without it (a few times), then falls back to masking every
// refused token of the vocabulary — so the common case costs one check per token.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace brisk {

class Tokenizer;

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Whether `token` may be generated next (end-of-generation tokens included). Must not change
  // the state; called on the engine thread.
  virtual bool Allows(int32_t token) const = 0;
  // `token` was generated (Allows returned true for it).
  virtual void Accept(int32_t token) = 0;
  // The request may generate at most max_tokens more tokens (the engine says so before the
  // first step): a constraint that can plan for it keeps its output complete at the length limit.
  virtual void SetMaxTokens(int max_tokens) { (void)max_tokens; }
  // Appends every token id below n_vocab that Allows refuses (the sampler's fallback after a
  // few refused draws). This default asks Allows for each; constraints with a faster way
  // override it.
  virtual void AppendRefused(int n_vocab, std::vector<int32_t>* refused) const {
    for (int32_t t = 0; t < n_vocab; ++t)
      if (!Allows(t)) refused->push_back(t);
  }
};

// Incremental JSON syntax check over bytes: which prefixes can still become one JSON object
// (RFC 8259 grammar; the top level must be an object, as OpenAI's json_object mode promises).
class JsonPrefixChecker {
 public:
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxWhitespaceRun = 16;  // no endless whitespace in place of content

  // Feeds bytes; false (state unchanged only up to the bad byte) when they cannot continue a
  // valid JSON object.
  bool Feed(std::string_view bytes);
  bool complete() const { return mode_ == Mode::kDone; }

 private:
  enum class Mode : uint8_t {
    kTop,
    kValue,
    kArrayFirst,
    kObjectFirst,
    kKey,
    kColon,
    kAfterValue,
    kString,
    kEscape,
    kUnicode,
    kNumber,
    kLiteral,
    kDone
  };
  enum class Num : uint8_t { kSign, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpDigits };
  bool Byte(unsigned char c);
  bool Close(char bracket);
  bool ValueStart(unsigned char c);

  Mode mode_ = Mode::kTop;
  Num num_ = Num::kSign;
  bool key_ = false;     // the string being read is an object key
  uint8_t pending_ = 0;  // kUnicode: hex digits left; kLiteral: index into literal_
  const char* literal_ = nullptr;
  int whitespace_run_ = 0;
  std::vector<char> stack_;  // '{' or '[' of each open container
};

// response_format json_object: the output is one JSON object, then end of generation.
class JsonObjectConstraint : public TokenConstraint {
 public:
  explicit JsonObjectConstraint(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  bool Allows(int32_t token) const override;
  void Accept(int32_t token) override;

 private:
  const Tokenizer& tokenizer_;
  JsonPrefixChecker checker_;
};

}  // namespace brisk
