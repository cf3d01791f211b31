// CORS (--allowed-origins) without sockets or a model: the policy's parsing and matching, the
// preflight, and ApiServer::Handle adding the header to every answer of an allowed origin (errors
// and streams too) while sending nothing when the option is off.
#include "server/cors.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/api_server.h"
#include "server_test_util.h"

namespace brisk::server {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;
using testutil::FakeExchange;

// The header's value, or "" when it is absent.
std::string Find(const Headers& h, const std::string& name) {
  for (const auto& [k, v] : h) {
    if (k == name) return v;
  }
  return "";
}

CorsPolicy Policy(const char* list) {
  auto p = ParseAllowedOrigins(list);
  EXPECT_TRUE(p.ok()) << p.message();
  return p.ok() ? *p : CorsPolicy();
}

TEST(CorsTest, ParsesOriginsAndStar) {
  EXPECT_FALSE(Policy("").enabled());
  EXPECT_TRUE(Policy("*").any_origin);
  const CorsPolicy p = Policy("https://App.example.com, http://localhost:3000/");
  EXPECT_EQ(p.origins,
            (std::vector<std::string>{"https://app.example.com", "http://localhost:3000"}));
  for (const char* bad :
       {"example.com", "https://a.com/path", "https://*.a.com", "https://a.com,", "://a.com"}) {
    SCOPED_TRACE(bad);
    const auto r = ParseAllowedOrigins(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("--allowed-origins"), std::string::npos) << r.message();
  }
}

TEST(CorsTest, MatchesOnlyListedOrigins) {
  const CorsPolicy p = Policy("https://app.example.com");
  const std::string listed = "https://APP.example.com", other = "https://evil.example.com";
  EXPECT_EQ(AllowOriginFor(p, &listed), listed);  // echoed as the browser sent it
  EXPECT_EQ(AllowOriginFor(p, &other), "");
  EXPECT_EQ(AllowOriginFor(p, nullptr), "");
  EXPECT_EQ(AllowOriginFor(Policy("*"), &other), "*");
  EXPECT_EQ(AllowOriginFor(CorsPolicy(), &listed), "");
}

HttpRequest Request(const std::string& method, const std::string& path, Headers headers) {
  HttpRequest r;
  r.method = method;
  r.target = r.path = path;
  r.headers = std::move(headers);
  return r;
}

HttpResponse Send(const char* allowed_origins, HttpRequest r) {
  ServerOptions o;
  o.api_key = "sk-1";
  o.cors = Policy(allowed_origins);
  ApiServer api(o, nullptr, nullptr);  // never loaded: model routes answer 503
  auto ex = std::make_shared<FakeExchange>();
  api.Handle(std::move(r), ex);
  EXPECT_EQ(ex->responses, 1);
  return ex->last;
}

const Headers kPreflight = {{"origin", "http://localhost:3000"},
                            {"access-control-request-method", "POST"}};

TEST(CorsTest, PreflightNeedsNoKey) {
  const HttpResponse r =
      Send("http://localhost:3000", Request("OPTIONS", "/v1/chat/completions", kPreflight));
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(Find(r.headers, "Access-Control-Allow-Origin"), "http://localhost:3000");
  EXPECT_EQ(Find(r.headers, "Vary"), "Origin");
  EXPECT_EQ(Find(r.headers, "Access-Control-Allow-Methods"), "GET, POST, OPTIONS");
  EXPECT_NE(Find(r.headers, "Access-Control-Allow-Headers").find("authorization"),
            std::string::npos);
  EXPECT_EQ(Find(r.headers, "Access-Control-Max-Age"), "600");
  Headers asked = kPreflight;
  asked.emplace_back("access-control-request-headers", "x-stainless-os, content-type");
  const HttpResponse echoed = Send("*", Request("OPTIONS", "/v1/models", asked));
  EXPECT_EQ(Find(echoed.headers, "Access-Control-Allow-Headers"), "x-stainless-os, content-type");
  EXPECT_EQ(Find(echoed.headers, "Access-Control-Allow-Origin"), "*");
}

TEST(CorsTest, PreflightFromAnotherOriginIsRefused) {
  const HttpResponse r =
      Send("https://app.example.com", Request("OPTIONS", "/v1/chat/completions", kPreflight));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("is not allowed"), std::string::npos) << r.body;
  EXPECT_EQ(Find(r.headers, "Access-Control-Allow-Origin"), "");
}

TEST(CorsTest, OffByDefault) {
  const HttpResponse r = Send("", Request("OPTIONS", "/v1/chat/completions", kPreflight));
  EXPECT_NE(r.status, 204);  // authentication first, as for any request: nothing special
  EXPECT_EQ(Find(r.headers, "Access-Control-Allow-Origin"), "");
  Headers key = kPreflight;
  key.emplace_back("authorization", "Bearer sk-1");
  const HttpResponse keyed = Send("", Request("OPTIONS", "/v1/chat/completions", key));
  EXPECT_EQ(keyed.status, 405);
  EXPECT_EQ(Find(keyed.headers, "Access-Control-Allow-Origin"), "");
  const HttpResponse get = Send("", Request("GET", "/health", {{"origin", "http://a.com"}}));
  EXPECT_EQ(Find(get.headers, "Access-Control-Allow-Origin"), "");
}

TEST(CorsTest, EveryAnswerToAnAllowedOriginCarriesTheHeader) {
  const Headers origin = {{"origin", "http://localhost:3000"}};
  for (const char* path : {"/health", "/v1/models", "/v1/chat/completions"}) {
    SCOPED_TRACE(path);
    const HttpResponse r = Send("http://localhost:3000", Request("GET", path, origin));
    EXPECT_EQ(r.status, std::string(path) == "/health" ? 503 : 401);  // loading; no key
    EXPECT_EQ(Find(r.headers, "Access-Control-Allow-Origin"), "http://localhost:3000");
    EXPECT_EQ(Find(r.headers, "Vary"), "Origin");
  }
  const HttpResponse other =
      Send("http://localhost:3000", Request("GET", "/health", {{"origin", "http://b.com"}}));
  EXPECT_EQ(Find(other.headers, "Access-Control-Allow-Origin"), "");
}

// Records a stream's header: generation streams get the CORS header through the same wrapper.
class StreamExchange : public FakeExchange {
 public:
  void StartStream(int status, std::string, Headers h) override {
    stream_status = status;
    stream_headers = std::move(h);
  }
  int stream_status = 0;
  Headers stream_headers;
};

TEST(CorsTest, StreamsCarryTheHeader) {
  auto inner = std::make_shared<StreamExchange>();
  auto ex = WithCorsHeaders(inner, "*");
  ex->StartStream(200, "text/event-stream", {{"Cache-Control", "no-cache"}});
  EXPECT_EQ(inner->stream_status, 200);
  EXPECT_EQ(Find(inner->stream_headers, "Cache-Control"), "no-cache");
  EXPECT_EQ(Find(inner->stream_headers, "Access-Control-Allow-Origin"), "*");
}

}  // namespace
}  // namespace brisk::server
