// GBNF, llama.cpp's grammar notation (grammars/README.md of llama.cpp), parsed into a Grammar so
// that grammars written for llama.cpp work unchanged:
//
//   name ::= alternatives        one rule; `root` is where every sentence starts
//   a b | c                      sequences and alternatives ("|" at a line's end continues it)
//   "text" [a-z] [^"\\] .        literals, classes, negated classes, any character
//   ( ... ) x* x+ x? x{m} x{m,} x{m,n}   grouping (newlines allowed inside) and repetition
//   # comment                    to the end of the line
//
// Escapes in literals and classes: \n \r \t \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH. Rule names are
// letters, digits, '-' and '_'. llama.cpp's tokenizer-specific token references (<[id]>, <text>,
// !<...>) are refused, as are a rule defined twice and a reversed range ([z-a]), which in
// llama.cpp silently replace a rule or match nothing.
#pragma once

#include <string_view>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::structured {

// Groups nest at most this deep: a hostile grammar cannot exhaust the parser's stack.
inline constexpr int kMaxGbnfNesting = 128;

// The grammar of `text`, or invalid_argument naming the line and column (1-based, in characters)
// and what was expected there, e.g. "grammar line 3, column 12: undefined rule 'value'".
Result<Grammar> ParseGbnf(std::string_view text);

}  // namespace brisk::structured
