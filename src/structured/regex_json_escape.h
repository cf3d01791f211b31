// Characters spelled as they must appear inside a JSON string literal (RegexOptions::json_escape):
// \" \\ \b \f \n \r \t for those seven, \u00xx (lowercase hex) for the other control characters,
// every other character as itself. A pattern over a JSON string's value thus constrains the
// string's text as the model writes it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "structured/grammar.h"

namespace brisk::structured {

class JsonEscapes {
 public:
  JsonEscapes(GrammarBuilder& b, std::string_view name) : b_(b), name_(name) {}

  // The spellings of any one character of `chars` (normalised, non-empty): one symbol when
  // every character spells as itself, an escape's literal for a single escaped character, else
  // a rule of the spellings (made once per set).
  Sequence Spell(const std::vector<CharRange>& chars);

 private:
  GrammarBuilder& b_;
  std::string name_;
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, int32_t> rules_;
};

}  // namespace brisk::structured
