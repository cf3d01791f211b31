// The byte-level form of a Grammar the matcher runs (internal to structured/): every rule's
// alternatives laid out in one element array, each alternative closed by an end element, and
// code-point sets lowered to UTF-8 byte sequences (one helper rule per multi-byte set).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::structured {

// 256 bits: which bytes a byte element takes.
struct ByteSet {
  std::array<uint64_t, 4> bits{};
  bool Has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
  void Add(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) bits[size_t(b) >> 6] |= uint64_t{1} << (b & 63);
  }
  bool operator==(const ByteSet&) const = default;
};

class CompiledGrammar {
 public:
  enum class Kind : uint8_t { kByte, kRule, kEnd };
  struct Element {
    Kind kind;
    int32_t arg;  // kByte: index into byte_sets; kRule: rule index; kEnd: the rule it closes
  };

  // elements[0] refers to the root and elements[1] ends it: a position's stacks all start
  // from there.
  std::vector<Element> elements;
  std::vector<ByteSet> byte_sets;
  std::vector<std::vector<int32_t>> alternatives;  // per rule: where each alternative starts
  std::vector<std::string> rule_names;
  // Per element: the fewest bytes from it (itself included) to the end of its alternative;
  // kNoEnd where no sentence can follow (a rule that never ends).
  static constexpr int32_t kNoEnd = 1 << 30;
  std::vector<int32_t> shortest_rest;

  static Result<CompiledGrammar> Lower(const Grammar& g);
};

// shortest_rest for g's elements (min_lengths.cc).
std::vector<int32_t> ShortestRests(const CompiledGrammar& g);

// The UTF-8 byte-range sequences that together encode exactly the scalar values in [lo, hi]
// (surrogates left out): each sequence is 1-4 (lo, hi) byte ranges, one per byte.
std::vector<std::vector<std::pair<uint8_t, uint8_t>>> Utf8RangeSequences(uint32_t lo, uint32_t hi);

}  // namespace brisk::structured
