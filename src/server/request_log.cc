#include "server/request_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

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

// Lines the writer gathers into one write() at most.
constexpr size_t kWriteBatchBytes = 1u << 20;

// Writes all of `bytes`; false (with the reason) on the first failure.
bool WriteAll(int fd, const std::string& bytes, std::string* why) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = n < 0 ? std::generic_category().message(errno) : "nothing written";
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
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

struct RequestLog::Shared {
  Shared(std::string p, int f, size_t max) : path(std::move(p)), fd(f), max_queued_bytes(max) {}
  ~Shared() { ::close(fd); }

  const std::string path;
  const int fd;
  const size_t max_queued_bytes;
  std::mutex mu;
  std::condition_variable cv;  // queue changed, a batch finished, or the writer exited
  std::deque<std::string> queue;
  size_t queued_bytes = 0;
  uint64_t accepted = 0, finished = 0;  // lines queued / written or failed
  bool stop = false, exited = false;
  RequestLogCounters counters;
};

// The writer thread: takes whole lines off the queue in batches and writes them, blocking as long
// as the file makes it; leaves once told to stop and the queue is empty.
void RequestLog::RunWriter(const std::shared_ptr<Shared>& s) {
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [&] { return s->stop || !s->queue.empty(); });
    if (s->queue.empty()) break;
    std::string batch;
    uint64_t lines = 0;
    while (!s->queue.empty() &&
           (batch.empty() || batch.size() + s->queue.front().size() <= kWriteBatchBytes)) {
      batch += s->queue.front();
      s->queue.pop_front();
      ++lines;
    }
    s->queued_bytes -= batch.size();
    lock.unlock();
    std::string why;
    const bool ok = WriteAll(s->fd, batch, &why);
    lock.lock();
    if (ok) {
      s->counters.lines_written += lines;
    } else {
      if (s->counters.write_errors == 0)
        std::fprintf(stderr,
                     "brisk serve: request log %s: write failed: %s (further failures are counted "
                     "in brisk:request_log_write_errors_total, not reported)\n",
                     s->path.c_str(), why.c_str());
      s->counters.write_errors += lines;
    }
    s->finished += lines;
    s->cv.notify_all();
  }
  s->exited = true;
  s->cv.notify_all();
}

Result<std::unique_ptr<RequestLog>> RequestLog::Open(const std::string& path,
                                                     std::function<double()> wall_clock,
                                                     size_t max_queued_bytes) {
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
  // Back to blocking writes: a full pipe slows the writer thread down (lines queue up behind it)
  // rather than failing them.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const std::string why = std::generic_category().message(errno);
    ::close(fd);
    return Status::Error(where + ": " + why);
  }
  if (!wall_clock) wall_clock = SystemSeconds;
  auto shared = std::make_shared<Shared>(path, fd, max_queued_bytes);
  std::thread([shared] { RunWriter(shared); }).detach();
  return std::unique_ptr<RequestLog>(
      new RequestLog(path, std::move(shared), std::move(wall_clock)));
}

RequestLog::RequestLog(std::string path, std::shared_ptr<Shared> shared,
                       std::function<double()> wall_clock)
    : path_(std::move(path)), shared_(std::move(shared)), wall_clock_(std::move(wall_clock)) {}

RequestLog::~RequestLog() {
  // The writer is detached and holds its own reference: a thread stuck in write() on a FIFO nobody
  // reads can neither be joined nor interrupted, and must not hold up the exit.
  std::unique_lock<std::mutex> lock(shared_->mu);
  shared_->stop = true;
  shared_->cv.notify_all();
  shared_->cv.wait_for(lock, std::chrono::duration<double>(kRequestLogCloseSeconds),
                       [&] { return shared_->exited; });
}

void RequestLog::Write(const RequestLogEntry& e) {
  std::string line;
  try {
    line = RequestLogLine(e, wall_clock_());
    line += '\n';
  } catch (const std::exception& ex) {  // nlohmann, bad_alloc: never past this boundary
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->counters.write_errors++;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (shared_->queued_bytes + line.size() > shared_->max_queued_bytes) {
      shared_->counters.lines_dropped++;
      return;
    }
    shared_->queued_bytes += line.size();
    shared_->queue.push_back(std::move(line));
    shared_->accepted++;
  }
  shared_->cv.notify_all();
}

bool RequestLog::Flush(double timeout_s) {
  std::unique_lock<std::mutex> lock(shared_->mu);
  const uint64_t target = shared_->accepted;
  return shared_->cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                              [&] { return shared_->finished >= target; });
}

RequestLogCounters RequestLog::counters() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->counters;
}

}  // namespace brisk::server
