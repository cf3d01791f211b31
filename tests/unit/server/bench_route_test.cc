// GET /bench and /bench/latest.json (server/bench_page.h) through ApiServer::Handle, without
// sockets: the report files are written by the test into a temporary bench folder, and every
// expected status, header and body is spelled out here by hand.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/bench_report.h"
#include "server/api_server.h"
#include "server/bench_page.h"
#include "server/static_assets.h"
#include "server_test_util.h"

namespace brisk::server {
namespace {

namespace fs = std::filesystem;

const char kCsp[] =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'";

using testutil::FakeExchange;

const std::string* HeaderOf(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return &v;
  return nullptr;
}

std::string HeaderValue(const HttpResponse& r, const std::string& name) {
  const std::string* v = HeaderOf(r, name);
  return v ? *v : "<missing " + name + ">";
}

void WriteFile(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

class BenchRoute : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("brisk-bench-route-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter.fetch_add(1)));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path Latest() {
    fs::create_directories(dir_ / "latest");
    return dir_ / "latest";
  }

  HttpResponse Get(const std::string& path, const std::string& api_key = "",
                   const std::string& method = "GET", const std::string* auth = nullptr) {
    ServerOptions o;
    o.api_key = api_key;
    o.bench_dir = dir_.string();
    ApiServer api(o, nullptr, nullptr);
    HttpRequest r;
    r.method = method;
    r.target = path;
    r.path = path;
    if (auth) r.headers.emplace_back("authorization", *auth);
    auto ex = std::make_shared<FakeExchange>();
    api.Handle(std::move(r), ex);
    EXPECT_EQ(ex->responses, 1) << method << " " << path;
    return ex->last;
  }

  fs::path dir_;
};

TEST_F(BenchRoute, ServesTheReportByteForByteWithStrictHeaders) {
  // NUL, UTF-8 and a script element: served verbatim; the CSP is what keeps script from running.
  const std::string report = std::string("<!doctype html><title>r</title>\0x", 33) +
                             "<p>TTFT p99 — 12.5 ms</p><svg><rect/></svg>"
                             "<script>alert(1)</script>\n";
  WriteFile(Latest() / "report.html", report);
  HttpResponse r = Get("/bench");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body.size(), report.size());
  EXPECT_TRUE(r.body == report);
  EXPECT_EQ(HeaderValue(r, "Content-Security-Policy"), kCsp);
  EXPECT_EQ(HeaderValue(r, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(HeaderValue(r, "Cache-Control"), "no-store");
  // No ETag: a validator for a file that changes in place would only invite stale copies.
  EXPECT_EQ(HeaderOf(r, "ETag"), nullptr);

  // HEAD is answered like GET (the transport drops the body for HEAD).
  HttpResponse head = Get("/bench", "", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(HeaderValue(head, "Content-Security-Policy"), kCsp);
}

TEST_F(BenchRoute, ReadsTheFileAgainOnEveryRequest) {
  WriteFile(Latest() / "report.html", "<p>first run</p>");
  EXPECT_EQ(Get("/bench").body, "<p>first run</p>");
  WriteFile(Latest() / "report.html", "<p>second run, longer than the first</p>");
  EXPECT_EQ(Get("/bench").body, "<p>second run, longer than the first</p>");
  fs::remove(Latest() / "report.html");
  EXPECT_EQ(Get("/bench").status, 404);
}

TEST_F(BenchRoute, NoReportGivesA404PageUnderTheSameCsp) {
  for (bool with_latest_dir : {false, true}) {
    if (with_latest_dir) Latest();
    HttpResponse r = Get("/bench");
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
    EXPECT_EQ(r.body.rfind("<!doctype html>", 0), 0u) << r.body;
    EXPECT_NE(r.body.find("No benchmark report yet — run `brisk bench`"), std::string::npos)
        << r.body;
    EXPECT_EQ(r.body.find("<script"), std::string::npos);
    EXPECT_EQ(HeaderValue(r, "Content-Security-Policy"), kCsp);
    EXPECT_EQ(HeaderValue(r, "X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(HeaderValue(r, "Cache-Control"), "no-store");
  }
  // The folder path is the operator's business, not the page's.
  EXPECT_EQ(Get("/bench").body.find(dir_.string()), std::string::npos);
  // No folder configured at all.
  HttpResponse none = BenchRouteResponse("/bench", "");
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(BenchRouteResponse("/bench/latest.json", "").status, 404);
}

TEST_F(BenchRoute, LatestJson) {
  const std::string json = "{\"runs\": [{\"concurrency\": 4, \"ttft_ms\": {\"p99\": 12.5}}]}\n";
  WriteFile(Latest() / "report.json", json);
  HttpResponse r = Get("/bench/latest.json");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, json);
  EXPECT_EQ(HeaderValue(r, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(HeaderValue(r, "Cache-Control"), "no-store");

  fs::remove(Latest() / "report.json");
  HttpResponse missing = Get("/bench/latest.json");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.content_type, "application/json");
  auto j = nlohmann::json::parse(missing.body);
  EXPECT_EQ(j["error"]["type"], "not_found_error");
  EXPECT_EQ(j["error"]["code"], "bench_missing");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("brisk bench"), std::string::npos);

  // Truncated mid-write, or not JSON at all: a clear 500, never the broken bytes.
  for (const char* bad : {"{\"runs\": [{\"concurrency\": 4", "<html>", "", "{} {}"}) {
    WriteFile(Latest() / "report.json", bad);
    HttpResponse b = Get("/bench/latest.json");
    EXPECT_EQ(b.status, 500) << "'" << bad << "'";
    auto e = nlohmann::json::parse(b.body);
    EXPECT_EQ(e["error"]["type"], "server_error");
    EXPECT_EQ(e["error"]["code"], "bench_invalid");
  }
}

TEST_F(BenchRoute, FilesOverTheCapGive500) {
  // The cap boundary, with a small cap: exactly at it is served, one byte over is refused.
  WriteFile(Latest() / "report.html", std::string(1000, 'a'));
  HttpResponse at = BenchRouteResponse("/bench", dir_.string(), 1000);
  EXPECT_EQ(at.status, 200);
  EXPECT_EQ(at.body.size(), 1000u);
  WriteFile(Latest() / "report.html", std::string(1001, 'a'));
  HttpResponse over = BenchRouteResponse("/bench", dir_.string(), 1000);
  EXPECT_EQ(over.status, 500);
  EXPECT_NE(over.body.find("latest/report.html: is 1001 bytes, over the limit of 1000 bytes"),
            std::string::npos)
      << over.body;
  EXPECT_EQ(HeaderValue(over, "Content-Security-Policy"), kCsp);

  // The server's own cap is 32 MiB: a sparse file one byte larger (no disk space used).
  EXPECT_EQ(kMaxBenchReportBytes, 32u * 1024 * 1024);
  WriteFile(Latest() / "report.html", "");
  fs::resize_file(Latest() / "report.html", (32u << 20) + 1);
  HttpResponse big = Get("/bench");
  EXPECT_EQ(big.status, 500);
  EXPECT_NE(big.body.find("over the limit of 32 MiB"), std::string::npos) << big.body.size();

  WriteFile(Latest() / "report.json", "");
  fs::resize_file(Latest() / "report.json", (32u << 20) + 1);
  HttpResponse big_json = Get("/bench/latest.json");
  EXPECT_EQ(big_json.status, 500);
  auto e = nlohmann::json::parse(big_json.body);
  EXPECT_EQ(e["error"]["code"], "bench_report_too_large");
}

TEST_F(BenchRoute, OnlyRegularFilesAreRead) {
  // A directory where the file should be.
  fs::create_directories(Latest() / "report.html");
  HttpResponse d = Get("/bench");
  EXPECT_EQ(d.status, 500);
  EXPECT_NE(d.body.find("latest/report.html: is not a regular file"), std::string::npos) << d.body;
  // A FIFO with no writer would block a blocking open() or read() forever: it must be refused
  // at once (the test would hang otherwise).
  ASSERT_EQ(::mkfifo((Latest() / "report.json").c_str(), 0600), 0);
  HttpResponse f = Get("/bench/latest.json");
  EXPECT_EQ(f.status, 500);
  EXPECT_EQ(nlohmann::json::parse(f.body)["error"]["code"], "bench_unreadable");
}

TEST_F(BenchRoute, RequestPathsNeverReachTheFilesystem) {
  WriteFile(Latest() / "report.html", "<p>report</p>");
  WriteFile(Latest() / "other.html", "<p>other</p>");
  for (const char* p :
       {"/bench/", "/bench/latest/report.html", "/bench/latest/other.html", "/bench/../bench",
        "/bench/report.html", "/Bench", "/bench%2f", "/bench/latest.json/", "/benchmark"}) {
    HttpResponse r = Get(p);
    EXPECT_EQ(r.status, 404) << p;
    EXPECT_EQ(r.body.find("<p>"), std::string::npos) << p;
  }
  EXPECT_TRUE(IsBenchRoute("/bench"));
  EXPECT_TRUE(IsBenchRoute("/bench/latest.json"));
  EXPECT_FALSE(IsBenchRoute("/bench/"));
  EXPECT_FALSE(IsBenchRoute(std::string_view("/bench\0x", 8)));
}

TEST_F(BenchRoute, ApiKeyRuleIsTheStaticUiRule) {
  WriteFile(Latest() / "report.html", "<p>report</p>");
  WriteFile(Latest() / "report.json", "{}");
  const std::string key = "s3cret";
  // The reference points: the UI page is public, /metrics is not.
  EXPECT_EQ(Get("/", key).status, 200);
  EXPECT_EQ(Get("/metrics", key).status, 401);
  // The bench report is public like the UI: a link cannot send a Bearer header.
  EXPECT_EQ(Get("/bench", key).status, 200);
  EXPECT_EQ(Get("/bench/latest.json", key).status, 200);
  const std::string good = "Bearer " + key, bad = "Bearer wrong";
  EXPECT_EQ(Get("/bench", key, "GET", &good).status, 200);
  EXPECT_EQ(Get("/bench", key, "GET", &bad).status, 200);
  // Other methods are not UI reads: they meet the key check first, as POST / does.
  EXPECT_EQ(Get("/", key, "POST").status, 401);
  EXPECT_EQ(Get("/bench", key, "POST").status, 401);
  EXPECT_EQ(Get("/bench", key, "POST", &good).status, 404);
  EXPECT_EQ(Get("/bench", "", "DELETE").status, 404);
}

TEST(BenchPage, HtmlEscape) {
  EXPECT_EQ(HtmlEscape(""), "");
  EXPECT_EQ(HtmlEscape("plain — `brisk bench`"), "plain — `brisk bench`");
  EXPECT_EQ(HtmlEscape("<script>a & b</script>"), "&lt;script&gt;a &amp; b&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("\"x\" 'y'"), "&quot;x&quot; &#39;y&#39;");
  EXPECT_EQ(HtmlEscape("&amp;"), "&amp;amp;");
}

// Both UI pages link to the report; the link is relative ("bench"), so resolve it the way a
// browser does against the page's own path and check that the route answers it.
TEST(BenchPage, UiPagesLinkToTheReport) {
  for (const char* page : {"/index.html", "/dashboard.html"}) {
    const StaticAsset* a = FindStaticAsset(page);
    ASSERT_NE(a, nullptr) << page;
    const std::string html(a->bytes);
    const size_t at = html.find("data-testid=\"nav-bench\"");
    ASSERT_NE(at, std::string::npos) << page << " has no Bench link";
    const size_t tag = html.rfind("<a ", at);
    ASSERT_NE(tag, std::string::npos);
    const size_t href = html.find("href=\"", tag);
    ASSERT_LT(href, at);
    const size_t end = html.find('"', href + 6);
    std::string ref = html.substr(href + 6, end - href - 6);
    const std::string base(fs::path(page).parent_path().generic_string());
    const std::string resolved = ref.front() == '/' ? ref : base + (base == "/" ? "" : "/") + ref;
    EXPECT_EQ(resolved, "/bench") << page << ": href=\"" << ref << "\"";
    EXPECT_TRUE(IsBenchRoute(resolved));
    EXPECT_NE(html.find(">Bench</a>", at), std::string::npos) << page;
  }
}

// With a report.json, /bench renders it inside this server's frame (issue 32): the top bar with
// links back, this server's model, and the verdict on where it was measured.
TEST_F(BenchRoute, RendersReportJsonWithTheTopBarAndOrigin) {
  BenchReport rep;
  rep.started_at = "2025-01-15T10:42:07Z";
  rep.cpu = "Test CPU <x>";
  rep.model = "qwen-test";
  WriteFile(Latest() / "report.json", rep.ToJson());
  WriteFile(Latest() / "report.html", "<p>stale html</p>");
  const HttpResponse r = BenchRouteResponse("/bench", dir_.string(), kMaxBenchReportBytes,
                                            {"served<model>", "127.0.0.1:8080"});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(HeaderValue(r, "Content-Security-Policy"), kCsp);
  EXPECT_EQ(r.body.find("stale html"), std::string::npos);
  for (const char* want :
       {"<header class=\"topbar\">", "href=\"/\"", "href=\"/dashboard.html\"",
        "aria-current=\"page\" data-testid=\"nav-bench\">Bench</a>", "served&lt;model&gt;",
        "Measured 2025-01-15T10:42:07Z on Test CPU &lt;x&gt;", "model qwen-test",
        "data-origin=\"in-process\""})
    EXPECT_NE(r.body.find(want), std::string::npos) << want;
  EXPECT_EQ(r.body.find("<script"), std::string::npos);
  // A report.json this brisk cannot read falls back to the HTML file as written.
  WriteFile(Latest() / "report.json", "{\"format\": \"something else\"}");
  EXPECT_EQ(Get("/bench").body, "<p>stale html</p>");
  // "No report yet" keeps the top bar, so the page still leads back.
  fs::remove_all(Latest());
  const HttpResponse none = BenchRouteResponse("/bench", dir_.string(), kMaxBenchReportBytes,
                                               {"served", "127.0.0.1:8080"});
  EXPECT_EQ(none.status, 404);
  EXPECT_NE(none.body.find("<header class=\"topbar\">"), std::string::npos) << none.body;
  EXPECT_NE(none.body.find("href=\"/dashboard.html\""), std::string::npos);
}

TEST(BenchPage, OriginComparesTheReportsTargetAndModelWithThisServer) {
  BenchReport r;
  r.model = "m";
  const BenchPageServer self{"m", "localhost:8080"};
  EXPECT_EQ(OriginOf(r, self), ReportOrigin::kInProcess);
  const std::pair<const char*, ReportOrigin> cases[] = {
      {"http://127.0.0.1:8080", ReportOrigin::kThisServer},
      {"http://LOCALHOST:8080/v1", ReportOrigin::kThisServer},
      {"http://user@[::1]:8080", ReportOrigin::kThisServer},
      {"http://127.0.0.1:8081", ReportOrigin::kOtherServer},
      {"http://10.0.0.5:8080", ReportOrigin::kOtherServer},
      {"http://127.0.0.1", ReportOrigin::kOtherServer},  // port 80
      {"https://127.0.0.1:8080", ReportOrigin::kThisServer},
      {"ftp://127.0.0.1:8080", ReportOrigin::kOtherServer},
      {"http://127.0.0.1:80a80", ReportOrigin::kOtherServer},
      {"http://[::1:8080", ReportOrigin::kOtherServer},
      {"not a url", ReportOrigin::kOtherServer},
  };
  for (const auto& [url, want] : cases) {
    r.url = url;
    EXPECT_EQ(OriginOf(r, self), want) << url;
  }
  r.url = "http://127.0.0.1:8080";
  r.model = "other";
  EXPECT_EQ(OriginOf(r, self), ReportOrigin::kOtherServer);
  r.model = "m";
  EXPECT_EQ(OriginOf(r, {"m", ""}), ReportOrigin::kOtherServer);  // no Host header: unknown
  EXPECT_EQ(OriginOf(r, {"m", "127.0.0.1"}), ReportOrigin::kOtherServer);  // port 80
}

}  // namespace
}  // namespace brisk::server
