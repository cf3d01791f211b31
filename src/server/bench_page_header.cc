// The /bench page's top bar and report-origin verdict (see bench_page_header.h).
#include "server/bench_page_header.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "util/ascii.h"
#include "util/html_escape.h"

namespace brisk::server {
namespace {

// The top bar of web/dashboard.html, restyled inline: the report page's Content-Security-Policy
// allows inline styles only, so /css/style.css cannot be linked. It wraps instead of overflowing
// at phone width, and its links are tall enough to tap.
constexpr std::string_view kChromeCss = R"(
.topbar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 16px; padding: 4px 16px;
          background: #fff; border-bottom: 1px solid #d8dee4; }
.brand { font-weight: 700; font-size: 18px; text-decoration: none; color: #1f2328;
         padding: 8px 0; }
.model { display: flex; gap: 6px; align-items: baseline; min-width: 0; overflow-wrap: anywhere; }
.model-label { color: #656d76; font-size: 12px; text-transform: uppercase; }
.model-name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.nav { display: flex; gap: 12px; margin-left: auto; }
.nav a { text-decoration: none; color: #656d76; padding: 10px 4px; }
.nav a[aria-current="page"] { color: #1f2328; border-bottom: 2px solid #2563eb; }
.origin { display: block; margin-top: 4px; }
.origin-this-server { color: #0a7d32; }
.origin-other-server, .origin-in-process { color: #9b1c1c; }
)";

struct Authority {
  std::string host;  // lower case, IPv6 without brackets
  std::string port;
};

// "host", "host:port", "[v6]" or "[v6]:port" (userinfo and any path already gone); nullopt when
// it is none of those.
std::optional<Authority> SplitHostPort(std::string_view s, std::string_view default_port) {
  Authority a{"", std::string(default_port)};
  std::string_view rest;
  if (!s.empty() && s.front() == '[') {
    const size_t close = s.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.host = AsciiLower(s.substr(1, close - 1));
    rest = s.substr(close + 1);
  } else {
    const size_t colon = s.find(':');
    a.host = AsciiLower(s.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : s.substr(colon);
  }
  if (!rest.empty()) {
    if (rest.front() != ':' || rest.size() == 1) return std::nullopt;
    rest.remove_prefix(1);
    if (!std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    a.port = std::string(rest);
  }
  if (a.host.empty()) return std::nullopt;
  return a;
}

// The authority of an http(s) URL as `brisk bench --url` records it.
std::optional<Authority> UrlAuthority(std::string_view url) {
  std::string_view port = "80";
  const std::string scheme = AsciiLower(url.substr(0, url.find("://")));
  if (scheme == "https") port = "443";
  if ((scheme != "http" && scheme != "https") || url.find("://") == std::string_view::npos)
    return std::nullopt;
  url.remove_prefix(scheme.size() + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  if (const size_t at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
  return SplitHostPort(url, port);
}

// localhost, 127.0.0.0/8 and ::1 name the same machine whichever one a client typed.
bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool SameEndpoint(const Authority& a, const Authority& b) {
  return a.port == b.port && (a.host == b.host || (IsLoopback(a.host) && IsLoopback(b.host)));
}

std::string Verdict(ReportOrigin origin, const BenchPageServer& server) {
  const std::string self =
      "this server (" + HtmlEscape(server.host.empty() ? "unknown address" : server.host) +
      ", model " + HtmlEscape(server.model_id.empty() ? "unknown" : server.model_id) + ")";
  switch (origin) {
    case ReportOrigin::kThisServer:
      return "<strong class=\"origin origin-this-server\" data-testid=\"report-origin\" "
             "data-origin=\"this-server\">Measured on " +
             self + ".</strong>";
    case ReportOrigin::kOtherServer:
      return "<strong class=\"origin origin-other-server\" data-testid=\"report-origin\" "
             "data-origin=\"other-server\">Not measured on " +
             self + ": the report's target or model differs.</strong>";
    case ReportOrigin::kInProcess:
      break;
  }
  return "<strong class=\"origin origin-in-process\" data-testid=\"report-origin\" "
         "data-origin=\"in-process\">Not measured on " +
         self + ": `brisk bench` ran the model in its own process.</strong>";
}

}  // namespace

std::string_view BenchTopBarCss() { return kChromeCss; }

std::string BenchTopBar(const std::string& model_id) {
  const std::string model = model_id.empty() ? "unknown" : HtmlEscape(model_id);
  return "<header class=\"topbar\">\n<a class=\"brand\" href=\"/\">brisk</a>\n"
         "<span class=\"model\" title=\"Model served by this brisk instance\">"
         "<span class=\"model-label\">model</span> <span class=\"model-name\" "
         "data-testid=\"model-name\">" +
         model +
         "</span></span>\n<nav class=\"nav\">\n"
         "<a href=\"/\" data-testid=\"nav-chat\">Chat</a>\n"
         "<a href=\"/dashboard.html\" data-testid=\"nav-dashboard\">Dashboard</a>\n"
         "<a href=\"/bench\" aria-current=\"page\" data-testid=\"nav-bench\">Bench</a>\n"
         "</nav>\n</header>\n";
}

ReportOrigin OriginOf(const BenchReport& report, const BenchPageServer& server) {
  if (report.url.empty()) return ReportOrigin::kInProcess;
  const std::optional<Authority> target = UrlAuthority(report.url);
  const std::optional<Authority> self = SplitHostPort(server.host, "80");
  if (!target || !self || !SameEndpoint(*target, *self)) return ReportOrigin::kOtherServer;
  return report.model == server.model_id ? ReportOrigin::kThisServer : ReportOrigin::kOtherServer;
}

ReportPageChrome BenchPageChrome(const BenchReport& report, const BenchPageServer& server) {
  ReportPageChrome c;
  c.css = kChromeCss;
  c.body_class = "page-bench";
  c.header_html = BenchTopBar(server.model_id);
  c.provenance_html = " " + Verdict(OriginOf(report, server), server);
  return c;
}

}  // namespace brisk::server
