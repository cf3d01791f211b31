#include "cli/cli_util.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>

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
                         "q5_k_m, q6_k)");
  return ft;
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "brisk: error: %s\n", status.message().c_str());
  return 1;
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace brisk::cli
