// brisk's Jinja interpreter for HF chat templates (DESIGN §4 "Chat templates").
//
// Renders the Jinja2 subset chat templates use, with HF transformers' settings: trim_blocks,
// lstrip_blocks, loop controls (break/continue), `tojson` without ASCII escaping and without
// key sorting (HF's signature: tojson(ensure_ascii=False, indent=None, separators=None,
// sort_keys=False)), `raise_exception(msg)` (the error message is exactly msg) and
// `strftime_now(fmt)`. Rendering is bounded (macro recursion depth, loop iterations, output
// size, nesting depth) so a runaway template ends with an error instead of exhausting the server.
//
// Supported: {{ }}, {% %}, {# #}, `-`/`+` whitespace control, raw, if/elif/else, for (loop.*,
// `if` filter, unpacking, else, break/continue), set (incl. block set and namespace attributes),
// macro/call/caller, filter blocks, with, HF's generation tag; Python-like expressions,
// literals, slices, conditional expressions; the filters, tests and str/dict/list methods in
// builtins.h. Values follow Python: int/float/str formatting, ==, ordering, truthiness,
// insertion-ordered dicts.
//
// Not supported (an error naming the construct and the line): include/import/extends/block,
// recursive loops, *args/**kwargs, filters/tests/methods outside the subset, non-string dict
// keys, integers beyond 64 bits. Unknown methods fail at render time (the object's type is
// known only then); everything else fails at parse time. Case mapping covers Latin, Greek,
// Cyrillic and Armenian letters.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"

namespace brisk::jinja {

struct Program;

struct RenderLimits {
  size_t max_output_bytes = 16u << 20;    // rendered text, and any one string value
  int64_t max_loop_iterations = 1000000;  // all for-loop iterations of one render together
  int max_call_depth = 64;                // nested macro calls
};

class ChatTemplate {
 public:
  // Parses a template. Errors: "unsupported filter 'foo' at line 3", "unclosed 'for' ...".
  static Result<ChatTemplate> Parse(std::string_view source);

  // Renders with `context` (a JSON object) as the template's variables. Keys are used in their
  // input order (Python dict semantics), e.g. by `tojson` and `items()`.
  Result<std::string> Render(const nlohmann::ordered_json& context,
                             const RenderLimits& limits = {}) const;

  // Renders with named variables without building a context object (nothing is copied).
  struct Var {
    std::string_view name;
    const nlohmann::ordered_json* value;
  };
  Result<std::string> RenderVars(const Var* vars, size_t count,
                                 const RenderLimits& limits = {}) const;

  // True when the template refers to a variable of this name anywhere.
  bool UsesVariable(std::string_view name) const;

 private:
  explicit ChatTemplate(std::shared_ptr<const Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const Program> program_;  // immutable; copies share it
};

// What HF's tokenizer.apply_chat_template does: renders with `messages`, `tools` (None when
// `tools` is null), `documents` (None), `add_generation_prompt`, and every key of
// `extra_kwargs` (a JSON object or null), which may override the others. HF also passes the
// tokenizer's special tokens (bos_token, eos_token, ...) and request kwargs such as
// enable_thinking this way.
Result<std::string> RenderChat(const ChatTemplate& tmpl, const nlohmann::ordered_json& messages,
                               const nlohmann::ordered_json& tools, bool add_generation_prompt,
                               const nlohmann::ordered_json& extra_kwargs,
                               const RenderLimits& limits = {});

}  // namespace brisk::jinja
