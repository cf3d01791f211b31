// The bench-report routes (see bench_page.h).
#include "server/bench_page.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "bench/bench_report.h"
#include "server/api_error.h"
#include "util/html_escape.h"

namespace brisk::server {
namespace {

constexpr std::string_view kPagePath = "/bench";
constexpr std::string_view kJsonPath = "/bench/latest.json";

enum class ReadOutcome { kOk, kMissing, kError };

struct FileRead {
  ReadOutcome outcome = ReadOutcome::kOk;
  std::string bytes;  // kOk: the file
  std::string error;  // kError: what went wrong, naming the file relative to the bench folder
  bool too_large = false;
};

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

std::string SizeText(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Reads `dir`/`name` whole, up to `max_bytes`. Only regular files are read: a FIFO or device
// placed there would otherwise block or stream forever on an HTTP thread (O_NONBLOCK keeps even
// the open() of a FIFO from waiting).
FileRead ReadReportFile(const std::string& dir, std::string_view name, size_t max_bytes) {
  FileRead out;
  const std::string label(name);
  auto fail = [&](std::string message) {
    out.outcome = ReadOutcome::kError;
    out.error = label + ": " + std::move(message);
    out.bytes.clear();
    return out;
  };
  if (dir.empty()) {
    out.outcome = ReadOutcome::kMissing;
    return out;
  }
  const std::string path = dir + "/" + label;
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      out.outcome = ReadOutcome::kMissing;
      return out;
    }
    return fail("cannot open: " + ErrnoText(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail("cannot stat: " + ErrnoText(errno));
  if (!S_ISREG(st.st_mode)) return fail("is not a regular file");
  if (st.st_size < 0 || static_cast<unsigned long long>(st.st_size) > max_bytes) {
    out.too_large = true;
    return fail("is " + SizeText(static_cast<size_t>(st.st_size)) + ", over the limit of " +
                SizeText(max_bytes));
  }
  out.bytes.resize(static_cast<size_t>(st.st_size) + 1);  // +1: notice growth since fstat
  size_t got = 0;
  for (;;) {
    if (got == out.bytes.size()) {
      if (got > max_bytes) {
        out.too_large = true;
        return fail("grew past the limit of " + SizeText(max_bytes) + " while being read");
      }
      out.bytes.resize(std::min(max_bytes + 1, out.bytes.size() * 2));
    }
    const ssize_t n = ::read(fd, out.bytes.data() + got, out.bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("read failed: " + ErrnoText(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.bytes.resize(got);
  return out;
}

void AddCommonHeaders(HttpResponse& r, std::string_view csp) {
  r.headers.emplace_back("Content-Security-Policy", std::string(csp));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  // The files are replaced in place by the next `brisk bench`: never show a stale copy.
  r.headers.emplace_back("Cache-Control", "no-store");
}

// A small page for "no report" and errors; it falls under the same CSP as the report itself.
HttpResponse MessagePage(int status, std::string_view title, std::string_view message,
                         const BenchPageServer& server) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body =
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>brisk · bench</title>\n"
      "<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1f2328}"
      "main{max-width:42rem;margin:4rem auto;padding:0 1rem}h1{font-size:1.4rem}" +
      std::string(BenchTopBarCss()) + "</style>\n</head>\n<body>\n" + BenchTopBar(server.model_id) +
      "<main>\n<h1>" + HtmlEscape(title) + "</h1>\n<p data-testid=\"bench-message\">" +
      HtmlEscape(message) + "</p>\n</main>\n</body>\n</html>\n";
  AddCommonHeaders(r, kBenchPageCsp);
  return r;
}

// The page rendered from latest/report.json inside this server's frame (top bar, origin
// verdict); nullopt when there is no readable report.json, e.g. one written by an older brisk.
std::optional<HttpResponse> RenderedPage(const std::string& bench_dir, size_t max_bytes,
                                         const BenchPageServer& server) {
  FileRead f = ReadReportFile(bench_dir, "latest/report.json", max_bytes);
  if (f.outcome != ReadOutcome::kOk) return std::nullopt;
  Result<BenchReport> report = BenchReportFromJson(f.bytes);
  if (!report.ok()) return std::nullopt;
  HttpResponse r;
  r.status = 200;
  r.content_type = "text/html; charset=utf-8";
  r.body = report->ToHtml(BenchPageChrome(*report, server));
  AddCommonHeaders(r, kBenchPageCsp);
  return r;
}

// latest/report.html as written, when report.json cannot be rendered.
HttpResponse PageResponse(const std::string& bench_dir, size_t max_bytes,
                          const BenchPageServer& server) {
  if (std::optional<HttpResponse> page = RenderedPage(bench_dir, max_bytes, server))
    return *std::move(page);
  FileRead f = ReadReportFile(bench_dir, "latest/report.html", max_bytes);
  if (f.outcome == ReadOutcome::kMissing)
    return MessagePage(404, "No benchmark report yet",
                       "No benchmark report yet — run `brisk bench`, then reload this page.",
                       server);
  if (f.outcome == ReadOutcome::kError)
    return MessagePage(500, "The benchmark report cannot be shown", f.error, server);
  HttpResponse r;
  r.status = 200;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(f.bytes);
  AddCommonHeaders(r, kBenchPageCsp);
  return r;
}

HttpResponse JsonResponse(const std::string& bench_dir, size_t max_bytes) {
  FileRead f = ReadReportFile(bench_dir, "latest/report.json", max_bytes);
  HttpResponse r;
  if (f.outcome == ReadOutcome::kMissing) {
    r = ErrorResponse(MakeError(404, "not_found_error",
                                "no benchmark report yet: run `brisk bench`", "bench_missing"));
  } else if (f.outcome == ReadOutcome::kError) {
    r = ErrorResponse(MakeError(500, "server_error", f.error,
                                f.too_large ? "bench_report_too_large" : "bench_unreadable"));
  } else if (!nlohmann::json::accept(f.bytes)) {
    // A hand-edited or half-copied file: say so rather than hand clients something unparsable.
    r = ErrorResponse(MakeError(500, "server_error",
                                "latest/report.json is not valid JSON (is `brisk bench` still "
                                "writing it?)",
                                "bench_invalid"));
  } else {
    r.status = 200;
    r.content_type = "application/json";
    r.body = std::move(f.bytes);
  }
  AddCommonHeaders(r, "default-src 'none'; frame-ancestors 'none'");
  return r;
}

}  // namespace

bool IsBenchRoute(std::string_view path) { return path == kPagePath || path == kJsonPath; }

HttpResponse BenchRouteResponse(std::string_view path, const std::string& bench_dir,
                                size_t max_bytes, const BenchPageServer& server) {
  if (path == kJsonPath) return JsonResponse(bench_dir, max_bytes);
  return PageResponse(bench_dir, max_bytes, server);
}

std::string HtmlEscape(std::string_view text) { return brisk::HtmlEscape(text); }

}  // namespace brisk::server
