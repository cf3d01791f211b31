#include "server/request_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <system_error>

namespace brisk::server {
namespace {

double SystemSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "2025-01-02T03:04:05.678Z". Out-of-range times (a broken clock) print as the epoch rather than
// failing the line.
std::string IsoUtc(double unix_s) {
  if (!std::isfinite(unix_s) || unix_s < 0 || unix_s > 253402300799.0) unix_s = 0;
  int64_t ms = static_cast<int64_t>(std::llround(unix_s * 1000));
  time_t secs = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];  // room for any int the format could print
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

// Milliseconds to the microsecond: enough for latencies, and lines stay short.
nlohmann::ordered_json Ms(double seconds) {
  if (!std::isfinite(seconds)) return nullptr;
  return std::round(seconds * 1e6) / 1e3;
}

}  // namespace

std::string RequestLogLine(const RequestLogEntry& e, double unix_s) {
  const Usage& u = e.usage;
  const RequestTimings& t = e.timings;
  nlohmann::ordered_json j;
  j["id"] = e.id;
  j["time"] = IsoUtc(unix_s);
  j["model"] = e.model;
  j["prompt_tokens"] = u.prompt_tokens;
  j["completion_tokens"] = u.completion_tokens;
  j["cached_tokens"] = u.cached_tokens;
  j["queue_ms"] = Ms(t.queued_s);
  j["ttft_ms"] = u.completion_tokens > 0 ? Ms(t.ttft_s) : nullptr;
  j["tpot_ms"] = u.completion_tokens > 1
                     ? Ms(t.decode_s / static_cast<double>(u.completion_tokens - 1))
                     : nullptr;
  j["e2e_ms"] = Ms(t.e2e_s);
  j["finish_reason"] = e.finish_reason;
  j["preemptions"] = t.preemptions;
  j["stream"] = e.stream;
  j["status"] = e.status;
  if (e.batch_size >= 0) j["batch_size"] = e.batch_size;
  if (!e.error.empty()) j["error"] = e.error;
  // Ids, model names and error messages may carry client bytes: invalid UTF-8 is replaced (the
  // default handler would throw) so one odd request cannot break the log.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::unique_ptr<RequestLog>> RequestLog::Open(const std::string& path,
                                                     std::function<double()> wall_clock) {
  const std::string where = "--request-log " + (path.empty() ? std::string("\"\"") : path);
  if (path.empty()) return Status::Error(where + ": empty path");
  // O_NONBLOCK: opening a FIFO nobody reads fails (ENXIO) instead of hanging the server start.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int err = errno;
    std::string why = std::generic_category().message(err);
    if (err == ENXIO) why = "a FIFO with no reader";
    return Status::Error(where + ": cannot open for appending: " + why);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 ||
      !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    return Status::Error(where + ": not a regular file, FIFO or character device");
  }
  // Back to blocking writes: a full pipe should slow the log down, not drop lines.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const std::string why = std::generic_category().message(errno);
    ::close(fd);
    return Status::Error(where + ": " + why);
  }
  if (!wall_clock) wall_clock = SystemSeconds;
  return std::unique_ptr<RequestLog>(new RequestLog(path, fd, std::move(wall_clock)));
}

RequestLog::RequestLog(std::string path, int fd, std::function<double()> wall_clock)
    : path_(std::move(path)), fd_(fd), wall_clock_(std::move(wall_clock)) {}

RequestLog::~RequestLog() { ::close(fd_); }

Status RequestLog::Write(const RequestLogEntry& e) {
  std::string line;
  try {
    line = RequestLogLine(e, wall_clock_());
  } catch (const std::exception& ex) {  // nlohmann, bad_alloc: never past this boundary
    line.clear();
    const bool first = errors_.fetch_add(1) == 0;
    return first ? Status::Error("request log " + path_ + ": " + ex.what()) : Status::Ok();
  }
  line += '\n';

  std::lock_guard<std::mutex> lock(mu_);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::generic_category().message(errno) : "nothing written";
      const bool first = errors_.fetch_add(1) == 0;
      return first ? Status::Error("request log " + path_ + ": write failed: " + why +
                                   " (further failures are counted, not reported)")
                   : Status::Ok();
    }
    done += static_cast<size_t>(n);
  }
  lines_.fetch_add(1);
  return Status::Ok();
}

}  // namespace brisk::server
