// Recognises a Grammar (grammar.h) byte by byte, so a token's bytes can be tried against it: the
// engine's constraints ask "may this token come next?" and advance on the token chosen.
//
// CompileGrammar lowers code-point sets to UTF-8 byte sets once; the result is immutable and
// shared by every request using the same grammar. A Matcher is one request's position in it: a
// set of parse stacks (a pushdown automaton run nondeterministically), hash-consed so that equal
// positions are equal numbers and a step can be memoised.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::structured {

class CompiledGrammar;

// Fails (invalid_argument) where the grammar is beyond the matcher (see GrammarBuilder::Build).
Result<std::shared_ptr<const CompiledGrammar>> CompileGrammar(const Grammar& g);

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);
  ~Matcher();
  Matcher(const Matcher&);
  Matcher& operator=(const Matcher&);

  // Feeds bytes; false (and the position unchanged) when they cannot continue a sentence.
  bool Accept(std::string_view bytes);
  // Whether Accept(bytes) would succeed; the position is unchanged either way.
  bool CanAccept(std::string_view bytes) const;
  // The bytes so far form a whole sentence of the grammar.
  bool CanEnd() const;
  // No byte can follow (a sentence is complete and cannot be extended).
  bool Finished() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Whether `text` as a whole is a sentence of the grammar.
bool Matches(const CompiledGrammar& g, std::string_view text);

}  // namespace brisk::structured
