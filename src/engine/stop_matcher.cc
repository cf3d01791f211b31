#include "engine/stop_matcher.h"

#include <algorithm>
#include <cstdint>

namespace brisk {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
  for (const std::string& s : stops_) max_len_ = std::max(max_len_, s.size());
}

std::string StopMatcher::Append(std::string_view piece, std::string* matched) {
  held_.append(piece);
  if (max_len_ == 0) {
    std::string out;
    out.swap(held_);
    return out;
  }
  // Earliest completed stop string wins (what a client scanning the full text would see first).
  size_t best = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = held_.find(s);
    if (at < best) {
      best = at;
      *matched = s;
    }
  }
  if (best != std::string::npos) {
    std::string out = held_.substr(0, best);
    held_.clear();
    return out;
  }
  // Keep the longest tail that is a prefix of some stop string; release the rest. Never split a
  // UTF-8 sequence: the cut moves back over continuation bytes.
  size_t keep = 0;
  for (const std::string& s : stops_)
    for (size_t k = std::min(s.size() - 1, held_.size()); k > keep; --k)
      if (held_.compare(held_.size() - k, k, s, 0, k) == 0) {
        keep = k;
        break;
      }
  size_t cut = held_.size() - keep;
  while (cut > 0 && cut < held_.size() && (uint8_t(held_[cut]) & 0xC0) == 0x80) --cut;
  // Nor end on an incomplete sequence (input arriving byte by byte): hold its lead byte back.
  if (cut > 0) {
    size_t lead = cut - 1;
    while (lead > 0 && (uint8_t(held_[lead]) & 0xC0) == 0x80) --lead;
    const uint8_t b = uint8_t(held_[lead]);
    const size_t len = b < 0x80         ? 1
                       : (b >> 5) == 6  ? 2
                       : (b >> 4) == 14 ? 3
                       : (b >> 3) == 30 ? 4
                                        : 1;
    if (lead + len > cut) cut = lead;
  }
  std::string out = held_.substr(0, cut);
  held_.erase(0, cut);
  return out;
}

std::string StopMatcher::Flush() {
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace brisk
