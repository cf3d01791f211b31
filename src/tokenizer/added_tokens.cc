#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <cstring>

namespace brisk::tok {

int32_t AddedTokenMatcher::Child(int32_t node, uint8_t byte) const {
  const auto& next = nodes_[static_cast<size_t>(node)].next;
  const auto it =
      std::lower_bound(next.begin(), next.end(), byte,
                       [](const std::pair<uint8_t, int32_t>& e, uint8_t b) { return e.first < b; });
  return it != next.end() && it->first == byte ? it->second : -1;
}

void AddedTokenMatcher::Add(std::string_view text, int32_t id) {
  if (text.empty()) return;
  int32_t node = 0;
  for (char c : text) {
    const auto b = static_cast<uint8_t>(c);
    int32_t child = Child(node, b);
    if (child < 0) {
      child = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
      auto& next = nodes_[static_cast<size_t>(node)].next;
      next.insert(std::lower_bound(next.begin(), next.end(), std::make_pair(b, int32_t{-1})),
                  std::make_pair(b, child));
    }
    node = child;
  }
  if (nodes_[static_cast<size_t>(node)].id < 0) nodes_[static_cast<size_t>(node)].id = id;
  const auto first = static_cast<uint8_t>(text[0]);
  if (!starts_[first]) {
    starts_[first] = true;
    ++n_start_bytes_;
    only_start_byte_ = first;
  }
}

AddedTokenMatcher::Match AddedTokenMatcher::Find(std::string_view text, size_t from) const {
  if (empty()) return {};
  const size_t n = text.size();
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t p = from; p < n; ++p) {
    if (n_start_bytes_ == 1) {
      const void* hit = std::memchr(s + p, only_start_byte_, n - p);
      if (hit == nullptr) return {};
      p = static_cast<size_t>(static_cast<const uint8_t*>(hit) - s);
    } else if (!starts_[s[p]]) {
      continue;
    }
    Match best;
    int32_t node = 0;
    for (size_t q = p; q < n; ++q) {
      node = Child(node, s[q]);
      if (node < 0) break;
      const int32_t id = nodes_[static_cast<size_t>(node)].id;
      if (id >= 0) best = Match{p, q + 1 - p, id};
    }
    if (best.pos != std::string_view::npos) return best;
  }
  return {};
}

}  // namespace brisk::tok
