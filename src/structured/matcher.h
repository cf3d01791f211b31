// Recognises a Grammar (grammar.h) byte by byte, so a token's bytes can be tried against it: the
// engine's constraints ask "may this token come next?" and advance on the token chosen.
//
// CompileGrammar lowers code-point sets to UTF-8 byte sets once; the result is immutable and
// shared by every request using the same grammar. A Matcher is one request's position in it: a
// set of parse stacks (a pushdown automaton run nondeterministically). Stacks are hash-consed
// and sets of them interned, so a position is one number and each (position, byte) step is
// computed once per matcher family (a matcher and its copies): walking the vocabulary's trie
// then costs a table lookup per byte in the common case.
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

// Bytes of compiled form, for reporting memory per grammar.
size_t CompiledGrammarBytes(const CompiledGrammar& g);

class Matcher {
 public:
  // A set of parse stacks, interned: equal positions are equal numbers within a matcher family.
  using Position = int32_t;
  static constexpr Position kDead = -1;

  // Work one family may do before it gives up (every later step is dead): bounds what a hostile
  // or pathologically ambiguous grammar can cost.
  static constexpr size_t kMaxStacks = 1 << 22;      // distinct stack frames
  static constexpr size_t kMaxPositionWidth = 4096;  // stacks alive at one position

  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);
  ~Matcher();
  // Copies share the family's tables (so a copy's steps are memoised for the original too); a
  // family is used by one thread at a time.
  Matcher(const Matcher&);
  Matcher& operator=(const Matcher&);

  // Feeds bytes; false (and the position unchanged) when they cannot continue a sentence.
  bool Accept(std::string_view bytes);
  // Whether Accept(bytes) would succeed; the position is unchanged either way.
  bool CanAccept(std::string_view bytes) const;
  // The position Accept(bytes) would reach (kDead if it would fail); the position is unchanged.
  Position After(std::string_view bytes) const;
  // The bytes so far form a whole sentence of the grammar.
  bool CanEnd() const { return PositionCanEnd(position_); }
  // No byte can follow (a sentence is complete and cannot be extended).
  bool Finished() const;
  // The family gave up (a limit above was reached).
  bool overflowed() const;
  // Bytes the family's tables hold (stacks, positions, memoised steps).
  size_t memory_bytes() const;

  // The low-level walk (token masks): the current position, the position after one more byte
  // (kDead if none), and whether a position is a whole sentence.
  Position position() const { return position_; }
  Position Step(Position from, uint8_t byte) const;
  bool PositionCanEnd(Position p) const;
  // Whether any byte at all can follow position p.
  bool PositionHasNext(Position p) const;
  // The fewest bytes that finish a sentence from position p (0 when it can end there);
  // kNoBytesToEnd when none can (kDead, or only rules that never end).
  static constexpr int32_t kNoBytesToEnd = 1 << 30;
  int32_t PositionBytesToEnd(Position p) const;
  int32_t BytesToEnd() const { return PositionBytesToEnd(position_); }

 private:
  struct Family;
  std::shared_ptr<Family> family_;
  Position position_ = kDead;
};

// Whether `text` as a whole is a sentence of the grammar.
bool Matches(const CompiledGrammar& g, std::string_view text);
bool Matches(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text);

}  // namespace brisk::structured
