// The one monotonic clock for timings (request latencies, step times, benchmarks, timeouts).
#pragma once

#include <chrono>

namespace brisk {

// Seconds on the steady clock; only differences between two readings mean anything.
inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds since the Unix epoch: only for timestamps other processes read (KV-event batches).
inline double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace brisk
