// The bench's HTTP client: SSE framing split anywhere, URL parsing, and the failure modes a load
// generator meets (refused, hung, truncated, closed keep-alive connections), each ending with a
// clear message and never a hang.
#include "bench/http_client.h"

#include <gtest/gtest.h>

#include "script_server.h"

namespace brisk {
namespace {

using test::Chunk;
using test::Event;
using test::LastChunk;
using test::Script;
using test::ScriptRequest;
using test::ScriptServer;
using test::SseHeader;

std::vector<SseEvent> ParseAll(const std::string& text, size_t piece, Status* finish) {
  SseParser p;
  std::vector<SseEvent> out;
  for (size_t i = 0; i < text.size(); i += piece) {
    Status st = p.Feed(std::string_view(text).substr(i, piece), double(i), out);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  *finish = p.Finish();
  return out;
}

TEST(SseParser, EventsSurviveAnySplit) {
  const std::string text =
      ": ping\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata:two\ndata: lines\n\nid: 7\n\n"
      "data: [DONE]\n\n";
  for (size_t piece : {size_t(1), size_t(2), size_t(3), size_t(7), text.size()}) {
    Status finish;
    std::vector<SseEvent> ev = ParseAll(text, piece, &finish);
    EXPECT_TRUE(finish.ok()) << finish.message();
    ASSERT_EQ(ev.size(), 3u) << "piece " << piece;
    EXPECT_EQ(ev[0].data, "{\"a\":1}");
    EXPECT_EQ(ev[1].data, "two\nlines");
    EXPECT_EQ(ev[2].data, "[DONE]");
  }
}

TEST(SseParser, EventTimeIsTheReadThatCompletedIt) {
  SseParser p;
  std::vector<SseEvent> out;
  ASSERT_TRUE(p.Feed("data: a\n", 1.0, out).ok());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(p.Feed("\ndata: b\n\n", 2.0, out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].t_s, 2.0);
  EXPECT_EQ(out[1].t_s, 2.0);
}

TEST(SseParser, MalformedLinesAndUnfinishedEvents) {
  SseParser p;
  std::vector<SseEvent> out;
  Status st = p.Feed("{\"choices\":[]}\n\n", 0, out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("malformed SSE line"), std::string::npos) << st.message();

  SseParser q;
  ASSERT_TRUE(q.Feed("data: {\"a\":1}\n", 0, out).ok());
  EXPECT_FALSE(q.Finish().ok());
  SseParser r;
  ASSERT_TRUE(r.Feed("data: {\"a\"", 0, out).ok());
  EXPECT_NE(r.Finish().message().find("ended inside an event"), std::string::npos);
}

TEST(HttpUrl, Parses) {
  auto u = ParseHttpUrl("http://127.0.0.1:8080");
  ASSERT_TRUE(u.ok()) << u.message();
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "8080");
  EXPECT_EQ(u->base_path, "");
  u = ParseHttpUrl("localhost:9000/v1/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "localhost");
  EXPECT_EQ(u->base_path, "");
  u = ParseHttpUrl("http://[::1]:81/proxy/v1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->base_path, "/proxy");
  EXPECT_EQ(u->ToString(), "http://[::1]:81/proxy");
  u = ParseHttpUrl("http://example.org");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, "80");
  for (const char* bad : {"https://x:1", "ftp://x", "http://:80", "http://x:0", "http://x:99999",
                          "http://u:p@x:1", "http://x:1/?q", "http://x:8a"})
    EXPECT_FALSE(ParseHttpUrl(bad).ok()) << bad;
}

HttpUrl UrlOf(const ScriptServer& s) { return *ParseHttpUrl(s.url()); }

HttpCallRequest Post(const std::string& body = "{}") {
  HttpCallRequest r;
  r.target = "/v1/chat/completions";
  r.body = body;
  return r;
}

TEST(HttpClient, StreamsEventsWithTheirArrivalTimes) {
  ScriptServer server([](const ScriptRequest&) {
    return Script{test::Write(SseHeader()), test::Sleep(60), test::Write(Event("one")),
                  test::Sleep(50), test::Write(Event("two") + Event("[DONE]") + LastChunk())};
  });
  HttpClientOptions o;
  o.headers = {{"Authorization", "Bearer k"}};
  HttpCallResult r = HttpCall(UrlOf(server), o, Post("{\"x\":1}"));
  ASSERT_TRUE(r.error.ok()) << r.error.message();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.event_stream);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].data, "one");
  EXPECT_GE(1e3 * (r.events[0].t_s - r.start_s), 55);
  EXPECT_GE(1e3 * (r.events[1].t_s - r.events[0].t_s), 45);
  EXPECT_LE(r.events[2].t_s, r.end_s);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].body, "{\"x\":1}");
}

TEST(HttpClient, ErrorStatusKeepsTheMessage) {
  ScriptServer server([](const ScriptRequest&) {
    return Script{test::Write(test::WholeResponse(
        500, "application/json", R"({"error":{"message":"boom","type":"server_error"}})"))};
  });
  HttpCallResult r = HttpCall(UrlOf(server), {}, Post());
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(DescribeHttpFailure(r), "HTTP 500: boom");
  r.body = "plain text";
  EXPECT_EQ(DescribeHttpFailure(r), "HTTP 500: plain text");
}

TEST(HttpClient, ConnectionRefused) {
  int port;
  {
    ScriptServer gone([](const ScriptRequest&) { return Script{}; });
    port = gone.port();
  }
  HttpUrl u = *ParseHttpUrl("http://127.0.0.1:" + std::to_string(port));
  HttpCallResult r = HttpCall(u, {}, Post());
  EXPECT_FALSE(r.error.ok());
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.message().find("refused"), std::string::npos) << r.error.message();
}

TEST(HttpClient, HungServerTimesOut) {
  ScriptServer server([](const ScriptRequest&) {
    return Script{test::Write(SseHeader()), test::Write(Event("one")), test::Sleep(30000)};
  });
  HttpClientOptions o;
  o.total_timeout_s = 0.3;
  const double t0 = NowSeconds();
  HttpCallResult r = HttpCall(UrlOf(server), o, Post());
  EXPECT_LT(NowSeconds() - t0, 10.0);
  EXPECT_GE(NowSeconds() - t0, 0.25);
  EXPECT_NE(r.error.message().find("timeout"), std::string::npos) << r.error.message();
  ASSERT_EQ(r.events.size(), 1u);  // what came before the hang is kept
}

TEST(HttpClient, TruncatedStream) {
  ScriptServer server([](const ScriptRequest&) {
    return Script{test::Write(SseHeader() + Event("one")), test::Write("5\r\nda"), test::Close()};
  });
  HttpCallResult r = HttpCall(UrlOf(server), {}, Post());
  EXPECT_NE(r.error.message().find("truncated"), std::string::npos) << r.error.message();
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(HttpClient, BrokenChunkEncoding) {
  ScriptServer server(
      [](const ScriptRequest&) { return Script{test::Write(SseHeader() + "zz\r\nxx\r\n")}; });
  HttpCallResult r = HttpCall(UrlOf(server), {}, Post());
  EXPECT_NE(r.error.message().find("malformed HTTP response"), std::string::npos)
      << r.error.message();
}

TEST(HttpClient, MalformedSseFails) {
  ScriptServer server([](const ScriptRequest&) {
    return Script{test::Write(SseHeader() + Chunk("{\"bare\":1}\n\n") + LastChunk())};
  });
  HttpCallResult r = HttpCall(UrlOf(server), {}, Post());
  EXPECT_NE(r.error.message().find("malformed SSE"), std::string::npos) << r.error.message();
}

// Three requests on one connection; the server drops the connection silently after the first
// answer (no "Connection: close"), so the second send goes to a dead socket and must be resent.
TEST(HttpClient, KeepAliveAndReconnect) {
  std::atomic<int> n{0};
  ScriptServer server([&n](const ScriptRequest&) {
    const std::string body = "{}";
    Script s{test::Write(test::WholeResponse(200, "application/json", body))};
    if (n++ == 0) {
      s.push_back(test::Sleep(50));
      s.push_back(test::Close());
    }
    return s;
  });
  HttpClientLoop loop(UrlOf(server), {});
  const int conn = loop.AddConnection();
  std::vector<HttpCallResult> results;
  std::function<void(HttpCallResult)> next = [&](HttpCallResult r) {
    results.push_back(std::move(r));
    if (results.size() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    if (results.size() < 3) loop.Send(conn, Post(), next);
  };
  loop.Send(conn, Post(), next);
  loop.Run();
  ASSERT_EQ(results.size(), 3u);
  for (const HttpCallResult& r : results) {
    EXPECT_TRUE(r.error.ok()) << r.error.message();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "{}");
  }
  EXPECT_EQ(server.connections(), 2);  // one reconnect, then kept alive
}

TEST(HttpClient, ConnectionCloseHeaderReconnects) {
  ScriptServer server([](const ScriptRequest&) {
    return Script{
        test::Write(test::WholeResponse(200, "application/json", "{}", "Connection: close\r\n")),
        test::Close()};
  });
  HttpClientLoop loop(UrlOf(server), {});
  const int conn = loop.AddConnection();
  int ok = 0;
  std::function<void(HttpCallResult)> next = [&](HttpCallResult r) {
    EXPECT_TRUE(r.error.ok()) << r.error.message();
    if (++ok < 3) loop.Send(conn, Post(), next);
  };
  loop.Send(conn, Post(), next);
  loop.Run();
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(server.connections(), 3);
}

}  // namespace
}  // namespace brisk
