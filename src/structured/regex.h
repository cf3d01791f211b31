// Regular expressions (the ECMAScript dialect JSON Schema's "pattern", vLLM's guided_regex and
// SGLang's regex are written in) compiled into grammar rules. What cannot be enforced exactly
// (backreferences, lookaround) is refused with a message naming the construct and its offset.
#pragma once

#include <cstdint>
#include <string_view>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::structured {

struct RegexOptions {
  // true: the whole output must match (guided_regex). false: JSON Schema's "pattern" semantics,
  // unanchored: the pattern may match anywhere unless it starts with ^ / ends with $.
  bool anchored = true;
  // true: the rules spell each character as it must appear inside a JSON string literal, one
  // spelling per character: \" \\ \b \f \n \r \t, other control characters as \u00xx
  // (lowercase hex), everything else as itself (JSON Schema "pattern" inside a string).
  bool json_escape = false;
};

// Adds the rules for `pattern` to `b` and returns the rule that matches exactly the strings the
// pattern accepts (under `options`). `name` prefixes the new rules' names.
Result<int32_t> AddRegex(GrammarBuilder& b, std::string_view pattern, std::string_view name,
                         RegexOptions options = {});

// A whole grammar for `pattern` (anchored).
Result<Grammar> CompileRegex(std::string_view pattern);

}  // namespace brisk::structured
