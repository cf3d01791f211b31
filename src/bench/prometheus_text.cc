#include "bench/prometheus_text.h"

#include <cstdlib>

namespace brisk {
namespace {

std::string Shorten(std::string_view s, size_t n = 200) {
  std::string out(s.substr(0, n));
  if (s.size() > n) out += "...";
  return out;
}

// The sample's value: the first token after the name and its {labels} (label values may hold
// spaces and escaped quotes, so the braces are walked, not searched).
bool SampleValue(std::string_view line, size_t name_end, double* out) {
  size_t i = name_end;
  if (i < line.size() && line[i] == '{') {
    bool quoted = false;
    for (++i; i < line.size(); ++i) {
      if (quoted && line[i] == '\\') {
        ++i;
      } else if (line[i] == '"') {
        quoted = !quoted;
      } else if (!quoted && line[i] == '}') {
        break;
      }
    }
    if (i >= line.size()) return false;
    ++i;
  }
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  size_t end = i;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
  if (end == i) return false;
  const std::string token(line.substr(i, end - i));
  char* stop = nullptr;
  *out = std::strtod(token.c_str(), &stop);
  return stop == token.c_str() + token.size();
}

}  // namespace

Result<std::map<std::string, double, std::less<>>> SumPrometheusSamples(std::string_view text) {
  std::map<std::string, double, std::less<>> sums;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    const size_t name_end = line.find_first_of("{ \t");
    if (name_end == std::string_view::npos || name_end == 0)
      return Status::Error("malformed /metrics line '" + Shorten(line) + "'");
    double v = 0;
    if (!SampleValue(line, name_end, &v))
      return Status::Error("malformed /metrics line '" + Shorten(line) + "'");
    sums[std::string(line.substr(0, name_end))] += v;
  }
  return sums;
}

}  // namespace brisk
