// Splits added tokens (<|im_start|>, <tool_call>, ...) out of text: exact byte match,
// leftmost first and, among matches starting at the same position, longest first (HF's
// aho-corasick LeftmostLongest). A byte trie makes each attempt cost at most the length of the
// longest added token; positions whose byte starts no token are skipped without a trie walk.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace brisk::tok {

class AddedTokenMatcher {
 public:
  struct Match {
    size_t pos = std::string_view::npos;  // npos: no match
    size_t len = 0;
    int32_t id = -1;
  };

  // Empty texts are ignored; when a text is added twice, the first id is kept.
  void Add(std::string_view text, int32_t id);
  bool empty() const { return nodes_.size() <= 1; }

  Match Find(std::string_view text, size_t from) const;

 private:
  struct Node {
    int32_t id = -1;                                // a token ends here
    std::vector<std::pair<uint8_t, int32_t>> next;  // sorted by byte
  };
  int32_t Child(int32_t node, uint8_t byte) const;

  std::vector<Node> nodes_ = std::vector<Node>(1);  // nodes_[0] is the root
  bool starts_[256] = {};
  int n_start_bytes_ = 0;
  uint8_t only_start_byte_ = 0;  // when n_start_bytes_ == 1: memchr for it
};

}  // namespace brisk::tok
