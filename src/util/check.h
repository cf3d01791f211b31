// BRISK_CHECK: invariants of the program (not of its input). A failure is a bug: print file:line
// and abort so the core dump / sanitizer report points at it.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace brisk::internal {
[[noreturn]] inline void CheckFailed(const char* file, int line, const char* expr,
                                     const char* msg) {
  std::fprintf(stderr, "%s:%d: BRISK_CHECK failed: %s %s\n", file, line, expr, msg ? msg : "");
  std::fflush(stderr);
  std::abort();
}
}  // namespace brisk::internal

#define BRISK_CHECK(cond)                                                 \
  do {                                                                    \
    if (__builtin_expect(!(cond), 0))                                     \
      ::brisk::internal::CheckFailed(__FILE__, __LINE__, #cond, nullptr); \
  } while (0)

#define BRISK_CHECK_MSG(cond, msg)                                      \
  do {                                                                  \
    if (__builtin_expect(!(cond), 0))                                   \
      ::brisk::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
