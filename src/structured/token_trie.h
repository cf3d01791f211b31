// The vocabulary as a byte trie, built once per tokenizer, for computing which tokens a grammar
// allows next: a walk over the trie steps the matcher once per trie edge and skips a whole
// subtree at the first byte the grammar refuses, so a narrow position (a JSON key, a digit)
// costs a few hundred steps instead of a scan of 150k tokens.
//
// Nodes are stored in depth-first order with their subtree sizes, so the walk is one forward
// pass over flat arrays.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "structured/matcher.h"

namespace brisk::structured {

class TokenTrie {
 public:
  // Longer tokens (none in real vocabularies) are never allowed, which bounds the walk's depth.
  static constexpr size_t kMaxTokenBytes = 1024;

  // token_bytes[i]: the bytes token i stands for; empty: a token no grammar allows (control
  // tokens, end of generation: the caller decides those).
  explicit TokenTrie(const std::vector<std::string>& token_bytes);

  int n_tokens() const { return n_tokens_; }
  size_t memory_bytes() const;

  // Sets bit t of `allowed` (n_tokens() bits, cleared first) for every token t whose bytes the
  // matcher accepts from its current position and after which a sentence can be finished in at
  // most max_bytes_to_end bytes. Returns the most bytes-to-end any allowed token leaves (-1 when
  // none is allowed), so a caller can tell whether a smaller limit would change the mask.
  int32_t Allowed(const Matcher& m, std::vector<uint64_t>* allowed,
                  int32_t max_bytes_to_end = Matcher::kNoBytesToEnd) const;

 private:
  int n_tokens_ = 0;
  // Per node, depth-first (node 0 is the root, the empty prefix).
  std::vector<uint8_t> byte_;          // the edge into the node
  std::vector<uint16_t> depth_;        // root 0
  std::vector<uint32_t> subtree_;      // nodes in the subtree, the node included
  std::vector<uint32_t> first_token_;  // tokens ending here: tokens_[first_token_[i] .. [i+1])
  std::vector<int32_t> tokens_;
};

}  // namespace brisk::structured
