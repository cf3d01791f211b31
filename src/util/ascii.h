// ASCII case folding for protocol tokens (hostnames, header values, ISA and quant names): never
// locale-dependent, so "I" folds to "i" whatever the process locale is.
#pragma once

#include <string>
#include <string_view>

namespace brisk {

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace brisk
