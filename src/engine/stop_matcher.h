// Stop strings over streamed text: text that could still turn into a stop string is held back, so
// a client never receives part of a stop string; when one completes, the text before it is
// released and the request stops (OpenAI semantics: the stop string itself is not returned).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace brisk {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  // Adds generated text; returns what may be emitted now. When a stop string completes, *matched
  // is set to it and the returned text ends right before it.
  std::string Append(std::string_view piece, std::string* matched);
  // The held-back tail, when generation ends for another reason.
  std::string Flush();
  bool active() const { return max_len_ > 0; }

 private:
  std::vector<std::string> stops_;
  size_t max_len_ = 0;
  std::string held_;  // text not yet emitted (shorter than the longest stop string)
};

}  // namespace brisk
