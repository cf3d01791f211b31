#include "runtime/process_memory.h"

#include <cstdio>
#include <cstring>

namespace brisk {

size_t ProcessAnonRssBytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  size_t kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long v = 0;
    if (std::strncmp(line, "RssAnon:", 8) == 0 && std::sscanf(line + 8, "%llu", &v) == 1) {
      kb = size_t(v);
      break;
    }
  }
  std::fclose(f);
  return kb * 1024;
}

}  // namespace brisk
