#include "bench/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace brisk {

ProgressLine::ProgressLine(std::string label, int total, bool enabled)
    : label_(std::move(label)),
      total_(std::max(total, 1)),
      enabled_(enabled),
      tty_(enabled && isatty(2) == 1) {}

std::string ProgressLine::Render(int done, int failed, long long output_tokens,
                                 double elapsed_s) const {
  constexpr int kWidth = 24;
  const int filled = std::min(kWidth, done * kWidth / total_);
  std::string bar(size_t(filled), '#');
  bar.resize(kWidth, '.');
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-12s [%s] %d/%d requests, %d failed, %.0f tok/s, %.1f s",
                label_.c_str(), bar.c_str(), done, total_, failed,
                elapsed_s > 0 ? double(output_tokens) / elapsed_s : 0.0, elapsed_s);
  return buf;
}

void ProgressLine::Update(int done, int failed, long long output_tokens, double elapsed_s,
                          bool force) {
  if (!tty_) return;
  if (!force && last_draw_s_ >= 0 && elapsed_s - last_draw_s_ < 0.2) return;
  last_draw_s_ = elapsed_s;
  std::fprintf(stderr, "\r%s\033[K", Render(done, failed, output_tokens, elapsed_s).c_str());
  std::fflush(stderr);
}

void ProgressLine::Finish(int done, int failed, long long output_tokens, double elapsed_s) {
  if (!enabled_) return;
  std::fprintf(stderr, "%s%s\n", tty_ ? "\r\033[K" : "",
               Render(done, failed, output_tokens, elapsed_s).c_str());
  std::fflush(stderr);
}

}  // namespace brisk
