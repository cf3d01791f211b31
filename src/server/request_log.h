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
//
// The engine thread finishes requests, so nothing on that path may wait for the file: a FIFO
// nobody reads or a hung network mount would otherwise freeze all generation. Write() only
// queues the line; a writer thread of the log's own does the blocking write() calls. When the
// queue already holds max_queued_bytes (the file has stopped taking lines), new lines are
// dropped and counted (brisk:request_log_lines_dropped_total). Lines go out whole, several per
// write() on an O_APPEND descriptor, so lines from several processes sharing the file never
// interleave.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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

// What the log has done so far (GET /metrics).
struct RequestLogCounters {
  uint64_t lines_written = 0;
  uint64_t lines_dropped = 0;  // the queue was full: the file did not keep up (or is stuck)
  uint64_t write_errors = 0;   // lines lost to failed writes (disk full, I/O error)
};

// Lines waiting for the file, at most (one source of truth for the bound).
inline constexpr size_t kRequestLogQueueBytes = 4u << 20;
// How long the destructor lets the writer finish the queued lines before abandoning a stuck file.
inline constexpr double kRequestLogCloseSeconds = 2;

class RequestLog {
 public:
  // Opens `path` for appending (created 0644 when missing) and starts the writer thread. Errors
  // name the path and the reason: missing directory, permission, a directory, a FIFO nobody
  // reads. `wall_clock` returns seconds since the epoch (tests inject one); empty = the system
  // clock.
  static Result<std::unique_ptr<RequestLog>> Open(const std::string& path,
                                                  std::function<double()> wall_clock = {},
                                                  size_t max_queued_bytes = kRequestLogQueueBytes);
  // Gives the writer up to kRequestLogCloseSeconds for the queued lines; a writer still blocked
  // in write() after that is left behind (it owns what it uses) so shutdown never hangs.
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Thread-safe and never blocks on the file: formats the line and queues it (or drops it when
  // the queue is full). The writer reports its first failure on stderr; later ones are counted.
  void Write(const RequestLogEntry& e);
  // Waits until every line queued so far was written or failed; false after `timeout_s`.
  bool Flush(double timeout_s);

  RequestLogCounters counters() const;
  const std::string& path() const { return path_; }

 private:
  struct Shared;  // the queue and the descriptor, shared with the writer thread
  static void RunWriter(const std::shared_ptr<Shared>& s);
  RequestLog(std::string path, std::shared_ptr<Shared> shared, std::function<double()> wall_clock);

  std::string path_;
  std::shared_ptr<Shared> shared_;
  std::function<double()> wall_clock_;
};

}  // namespace brisk::server
