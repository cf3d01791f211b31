// The live progress line of `brisk bench`: on a terminal one line redrawn in place (at most 5
// times a second); in a log (stderr not a terminal) a single line when the point ends, so CI logs
// stay readable.
#pragma once

#include <string>

namespace brisk {

class ProgressLine {
 public:
  ProgressLine(std::string label, int total, bool enabled);
  // done/failed requests so far, output tokens so far, seconds since the point began.
  void Update(int done, int failed, long long output_tokens, double elapsed_s, bool force = false);
  void Finish(int done, int failed, long long output_tokens, double elapsed_s);

 private:
  std::string Render(int done, int failed, long long output_tokens, double elapsed_s) const;
  std::string label_;
  int total_;
  bool enabled_, tty_;
  double last_draw_s_ = -1;
};

}  // namespace brisk
