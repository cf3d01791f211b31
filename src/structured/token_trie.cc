#include "structured/token_trie.h"

#include <algorithm>
#include <numeric>

namespace brisk::structured {

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes)
    : n_tokens_(int(token_bytes.size())) {
  // Sorting the tokens by their bytes lists the trie's nodes depth-first: each token adds the
  // nodes for the bytes beyond its common prefix with the token before it.
  std::vector<int32_t> order;
  for (int32_t t = 0; t < n_tokens_; ++t) {
    const size_t len = token_bytes[size_t(t)].size();
    if (len > 0 && len <= kMaxTokenBytes) order.push_back(t);
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return token_bytes[size_t(a)] != token_bytes[size_t(b)]
               ? token_bytes[size_t(a)] < token_bytes[size_t(b)]
               : a < b;
  });
  byte_ = {0};
  depth_ = {0};
  std::vector<uint32_t> path = {0};  // node of each depth along the current token
  std::vector<std::vector<int32_t>> ends(1);
  std::string_view prev;
  for (int32_t t : order) {
    const std::string_view s = token_bytes[size_t(t)];
    size_t common = 0;
    while (common < s.size() && common < prev.size() && s[common] == prev[common]) ++common;
    path.resize(common + 1);
    for (size_t d = common; d < s.size(); ++d) {
      path.push_back(uint32_t(byte_.size()));
      byte_.push_back(uint8_t(s[d]));
      depth_.push_back(uint16_t(d + 1));
      ends.emplace_back();
    }
    ends[path.back()].push_back(t);
    prev = s;
  }
  const size_t n = byte_.size();
  // Subtree sizes: a node's subtree runs until the next node no deeper than it.
  subtree_.assign(n, 1);
  std::vector<uint32_t> open;
  for (uint32_t i = 0; i < n; ++i) {
    while (!open.empty() && depth_[open.back()] >= depth_[i]) {
      subtree_[open.back()] = i - open.back();
      open.pop_back();
    }
    open.push_back(i);
  }
  for (uint32_t i : open) subtree_[i] = uint32_t(n) - i;
  first_token_.reserve(n + 1);
  for (const auto& e : ends) {
    first_token_.push_back(uint32_t(tokens_.size()));
    tokens_.insert(tokens_.end(), e.begin(), e.end());
  }
  first_token_.push_back(uint32_t(tokens_.size()));
}

size_t TokenTrie::memory_bytes() const {
  return byte_.size() * (sizeof(uint8_t) + sizeof(uint16_t) + 2 * sizeof(uint32_t)) +
         tokens_.size() * sizeof(int32_t);
}

int32_t TokenTrie::Allowed(const Matcher& m, std::vector<uint64_t>* allowed,
                           int32_t max_bytes_to_end) const {
  allowed->assign((size_t(n_tokens_) + 63) / 64, 0);
  int32_t most_to_end = -1;
  std::vector<Matcher::Position> at_depth = {m.position()};  // position after each depth
  const uint32_t n = uint32_t(byte_.size());
  for (uint32_t i = 1; i < n;) {
    const uint16_t d = depth_[i];
    const Matcher::Position p = m.Step(at_depth[d - 1u], byte_[i]);
    if (p == Matcher::kDead) {
      i += subtree_[i];
      continue;
    }
    if (at_depth.size() <= d) at_depth.resize(size_t(d) + 1);
    at_depth[d] = p;
    if (first_token_[i] < first_token_[i + 1]) {
      const int32_t to_end = m.PositionBytesToEnd(p);
      if (to_end <= max_bytes_to_end) {
        most_to_end = std::max(most_to_end, to_end);
        for (uint32_t k = first_token_[i]; k < first_token_[i + 1]; ++k) {
          const int32_t t = tokens_[k];
          (*allowed)[size_t(t) >> 6] |= uint64_t{1} << (t & 63);
        }
      }
    }
    ++i;
  }
  return most_to_end;
}

}  // namespace brisk::structured
