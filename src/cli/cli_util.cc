#include "cli/cli_util.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace brisk::cli {

Result<std::vector<int32_t>> ParseTokenList(const std::string& text) {
  std::vector<int32_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) return Status::Error("empty token id in list '" + text + "'");
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > std::numeric_limits<int32_t>::max())
      return Status::Error("invalid token id '" + item + "'");
    out.push_back(int32_t(v));
    pos = comma + 1;
  }
  return out;
}

Result<FileType> ParseWritableFileType(const std::string& name) {
  FileType ft;
  if (!ParseFileType(name, &ft) || !CanWriteFileType(ft))
    return Status::Error("unknown or unsupported file type '" + name +
                         "' (choose f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k_m, "
                         "q5_k_m, q6_k, iq4_nl, iq4_xs)");
  return ft;
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "brisk: error: %s\n", status.message().c_str());
  return 1;
}

namespace {
std::string& CommandLineStorage() {
  static std::string s;
  return s;
}
}  // namespace

void SetCommandLine(int argc, char** argv) {
  std::string& s = CommandLineStorage();
  s.clear();
  bool secret_next = false;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) s += ' ';
    std::string a = i == 0 ? "brisk" : argv[i];
    // Reports print this line (and /bench serves it without a key): never the key itself.
    if (secret_next) {
      a = "REDACTED";
    } else if (a.rfind("--api-key=", 0) == 0) {
      a = "--api-key=REDACTED";
    }
    secret_next = a == "--api-key";
    // Quote what a shell would split or expand, so the line can be pasted back.
    if (a.empty() || a.find_first_of(" \t'\"$`\\*?;&|<>()") != std::string::npos) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    s += a;
  }
}

const std::string& CommandLine() { return CommandLineStorage(); }

std::function<void(double)> StderrProgress(double t0, bool bar) {
  const bool tty = isatty(STDERR_FILENO);
  return [tty, t0, bar, last = -1](double f) mutable {
    const int pct = int(f * 100);
    if (pct == last) return;
    last = pct;
    if (tty && bar) {
      std::fprintf(stderr, "\r[%-25s] %3d%%  %.1f s", std::string(pct / 4, '#').c_str(), pct,
                   NowSeconds() - t0);
    } else if (tty) {
      std::fprintf(stderr, "\r%3d%%  %.1f s", pct, NowSeconds() - t0);
    } else if (bar && pct % 10 == 0) {
      std::fprintf(stderr, "%d%% ", pct);
    }
  };
}

}  // namespace brisk::cli
