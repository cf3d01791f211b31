// The web UI's bench-report page (DESIGN §6 "Web UI", issue 8): `GET /bench` shows the latest
// `brisk bench` report and `GET /bench/latest.json` gives its JSON. `brisk bench` copies both
// files into `<bench dir>/latest/` after every run, so they are read again on every request (a new
// run replaces them while the server keeps running). Only those two fixed paths are ever opened;
// nothing from the request reaches the filesystem.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "server/bench_page_header.h"
#include "server/http_server.h"

namespace brisk::server {

// Larger report files get a 500: a report with charts is a few hundred KiB, so anything this big
// is not one, and reading it would hold an HTTP thread and that much memory per request.
inline constexpr size_t kMaxBenchReportBytes = size_t{32} << 20;

// The report page holds inline CSS and inline SVG and must never run script, even if the file
// were edited: this policy allows inline styles and data: images, nothing else.
inline constexpr std::string_view kBenchPageCsp =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'";

// True for the paths the bench routes answer ("/bench", "/bench/latest.json").
bool IsBenchRoute(std::string_view path);

// The response for GET/HEAD of a bench route `path` (IsBenchRoute must hold), reading from
// `bench_dir` ("" = no folder: always "no report yet").
//   /bench:             200 latest/report.json rendered as HTML inside this server's frame (top
//                       bar, "measured on this server or not": bench_page_header.h, for `server`);
//                       without a readable report.json, latest/report.html as written; or
//                       404 / 500 as a small HTML page.
//   /bench/latest.json: 200 latest/report.json (application/json, checked to be JSON), or an
//                       OpenAI-style error: 404 not_found_error, 500 server_error.
// Every answer carries kBenchPageCsp (HTML) or default-src 'none' (JSON), nosniff and
// Cache-Control: no-store (the report changes in place). `max_bytes` caps the file size.
HttpResponse BenchRouteResponse(std::string_view path, const std::string& bench_dir,
                                size_t max_bytes = kMaxBenchReportBytes,
                                const BenchPageServer& server = {});

// `text` with &, <, >, " and ' replaced by character references.
std::string HtmlEscape(std::string_view text);

}  // namespace brisk::server
