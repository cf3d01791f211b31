// `brisk serve --request-log FILE` (DESIGN §6 "Operations"): one JSON line per finished request,
// appended, so a run can be analysed afterwards with jq or pandas without scraping /metrics.
//
//   {"id":"chatcmpl-1","time":"2025-01-02T03:04:05.678Z","model":"qwen2.5-0.5b",
//    "prompt_tokens":12,"completion_tokens":30,"cached_tokens":0,"queue_ms":0.4,"ttft_ms":35.1,
//    "tpot_ms":20.2,"e2e_ms":621.0,"finish_reason":"stop","preemptions":0,"stream":true,
//    "status":200}
//
// ttft_ms is null when the request produced no token, tpot_ms (decode time / (tokens - 1)) below
// two tokens. Optional fields: "batch_size" (when >= 0) and "error" (when not empty).
// Each line goes out in one write() on an O_APPEND descriptor, so lines from several threads (or
// processes sharing the file) never interleave.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "engine/request.h"
#include "util/status.h"

namespace brisk::server {

struct RequestLogEntry {
  std::string id;             // the response id the client saw
  std::string model;          // served model name
  std::string finish_reason;  // as the client saw it, or the engine's (FinishReasonName)
  Usage usage;
  RequestTimings timings;
  bool stream = false;
  int status = 200;     // HTTP status sent
  int batch_size = -1;  // sequences per step seen by the request; omitted when < 0
  std::string error;    // FinishInfo::message for failures; omitted when empty
};

// The JSON line (without the trailing newline). `unix_s`: the finish time, seconds since the epoch.
std::string RequestLogLine(const RequestLogEntry& e, double unix_s);

class RequestLog {
 public:
  // Opens `path` for appending (created 0644 when missing). Errors name the path and the reason:
  // missing directory, permission, a directory, a FIFO nobody reads. `wall_clock` returns seconds
  // since the epoch (tests inject one); empty = the system clock.
  static Result<std::unique_ptr<RequestLog>> Open(const std::string& path,
                                                  std::function<double()> wall_clock = {});
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Thread-safe. A failed write (disk full, I/O error) never stops serving: the first failure is
  // returned so the caller logs it once; later ones return Ok and are only counted.
  Status Write(const RequestLogEntry& e);

  uint64_t lines_written() const { return lines_.load(); }
  uint64_t write_errors() const { return errors_.load(); }
  const std::string& path() const { return path_; }

 private:
  RequestLog(std::string path, int fd, std::function<double()> wall_clock);

  std::string path_;
  int fd_;
  std::function<double()> wall_clock_;
  std::mutex mu_;  // one line at a time: a partial write is finished before the next line starts
  std::atomic<uint64_t> lines_{0}, errors_{0};
};

}  // namespace brisk::server
