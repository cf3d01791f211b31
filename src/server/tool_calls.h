// Tool calls in generated text (DESIGN §4 "Chat templates"): Qwen answers a call as
//   <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
// (one or more). ToolCallParser is fed the output text as it streams and separates the plain
// content, which can be shown at once, from completed calls, which become OpenAI `tool_calls`.
// Used only when the request offers tools and tool_choice is not "none" (ToolCallsEnabled).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace brisk::server {

struct ToolCall {
  std::string id;  // the parser's prefix ("call_") + 24 alphanumerics
  std::string name;
  std::string arguments;  // a JSON text (an object as the model wrote it, compact)
};

// `n` random characters from [0-9A-Za-z].
std::string RandomAlnum(size_t n, std::mt19937_64& rng);

class ToolCallParser {
 public:
  // `seed` drives the call ids (tests pass a fixed one; the server a random one); ids are
  // id_prefix + 24 alphanumerics (OpenAI's "call_", Anthropic's "toolu_").
  explicit ToolCallParser(uint64_t seed, std::string id_prefix = "call_")
      : rng_(seed), id_prefix_(std::move(id_prefix)) {}

  // Returns the plain content that can be shown now: text that cannot be the start of
  // "<tool_call>" is released at once; a possible partial tag is held back. Completed calls are
  // appended to *calls. Whitespace-only text between calls and after the last one is dropped (a
  // reply made of calls has no content); at the very start it is held until other text follows
  // (then it is released with it) or a call does (then it is dropped). The concatenated content
  // and the calls depend only on the concatenated pieces, never on how the text was split.
  std::string Feed(std::string_view piece, std::vector<ToolCall>* calls);

  // End of output: returns the held text; an unclosed or unparsable call comes back as content.
  std::string Finish(std::vector<ToolCall>* calls);

  int calls_emitted() const { return calls_emitted_; }

 private:
  // Releases what can be released from outside_ (a possible partial tag stays).
  std::string ReleaseOutside();
  // Parses a complete call body; false when it is not a valid call.
  bool ParseCall(std::string_view body, ToolCall* call);

  std::mt19937_64 rng_;
  const std::string id_prefix_;
  bool in_call_ = false;
  std::string outside_;      // unreleased text outside a call
  std::string body_;         // text after "<tool_call>" while in a call
  size_t body_scanned_ = 0;  // body_ holds no "</tool_call>" starting before this offset
  // Nothing but whitespace was seen since the start or the last call (such text is dropped when
  // a call or the end follows).
  bool at_boundary_ = true;
  int calls_emitted_ = 0;
};

}  // namespace brisk::server
