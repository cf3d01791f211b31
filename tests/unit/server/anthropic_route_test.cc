// The Anthropic routes in ApiServer::Handle, without sockets or a model: x-api-key is a key like
// a Bearer token, and every refusal before the route runs (key, method, loading) comes in
// Anthropic's error shape with the status the OpenAI routes give, which keep their own shape.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/api_server.h"
#include "server_test_util.h"

namespace brisk::server {
namespace {

using Json = nlohmann::json;

using testutil::FakeExchange;

HttpResponse Send(const std::string& method, const std::string& path,
                  std::vector<std::pair<std::string, std::string>> headers,
                  const std::string& api_key = "sk-1") {
  ServerOptions o;
  o.api_key = api_key;
  ApiServer api(o, nullptr, nullptr);  // never loaded: routes that need the model answer 503
  HttpRequest r;
  r.method = method;
  r.target = r.path = path;
  r.headers = std::move(headers);
  r.body = R"({"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]})";
  auto ex = std::make_shared<FakeExchange>();
  api.Handle(std::move(r), ex);
  EXPECT_EQ(ex->responses, 1);
  return ex->last;
}

// {"type": "error", "error": {"type": type, "message": ...}} and nothing else.
void ExpectAnthropicError(const HttpResponse& r, int status, const char* type) {
  EXPECT_EQ(r.status, status) << r.body;
  const Json j = Json::parse(r.body);
  EXPECT_EQ(j["type"], "error") << r.body;
  EXPECT_EQ(j["error"]["type"], type) << r.body;
  EXPECT_TRUE(j["error"]["message"].is_string()) << r.body;
  EXPECT_EQ(j.size(), 2u) << r.body;
  EXPECT_EQ(j["error"].size(), 2u) << r.body;
}

TEST(AnthropicRouteTest, MissingOrWrongKeyIsAnAnthropic401) {
  for (const char* path : {"/v1/messages", "/v1/messages/count_tokens"}) {
    SCOPED_TRACE(path);
    ExpectAnthropicError(Send("POST", path, {}), 401, "authentication_error");
    ExpectAnthropicError(Send("POST", path, {{"x-api-key", "sk-2"}}), 401, "authentication_error");
    ExpectAnthropicError(Send("POST", path, {{"x-api-key", "sk-1x"}}), 401, "authentication_error");
  }
  // The OpenAI routes keep OpenAI's shape for the same refusal.
  const HttpResponse openai = Send("POST", "/v1/chat/completions", {});
  EXPECT_EQ(openai.status, 401);
  EXPECT_EQ(Json::parse(openai.body)["error"]["type"], "authentication_error");
  EXPECT_TRUE(Json::parse(openai.body)["error"].contains("param"));
}

TEST(AnthropicRouteTest, XApiKeyAndBearerAreBothKeys) {
  // Past the key check, a server without a model answers 503 (Anthropic: overloaded_error).
  for (const char* path : {"/v1/messages", "/v1/messages/count_tokens"}) {
    SCOPED_TRACE(path);
    ExpectAnthropicError(
        Send("POST", path, {{"x-api-key", "sk-1"}, {"anthropic-version", "2023-06-01"}}), 503,
        "overloaded_error");
    ExpectAnthropicError(Send("POST", path, {{"authorization", "Bearer sk-1"}}), 503,
                         "overloaded_error");
    ExpectAnthropicError(Send("POST", path, {}, /*api_key=*/""), 503, "overloaded_error");
  }
  // x-api-key opens the OpenAI routes too.
  EXPECT_EQ(Send("POST", "/v1/chat/completions", {{"x-api-key", "sk-1"}}).status, 503);
}

TEST(AnthropicRouteTest, WrongMethodIsAnAnthropic405) {
  ExpectAnthropicError(Send("GET", "/v1/messages", {{"x-api-key", "sk-1"}}), 405,
                       "invalid_request_error");
  ExpectAnthropicError(Send("PUT", "/v1/messages/count_tokens", {{"x-api-key", "sk-1"}}), 405,
                       "invalid_request_error");
}

TEST(AnthropicRouteTest, KeyComparison) {
  const std::string key = "sk-1";
  EXPECT_TRUE(KeyMatches(&key, "sk-1"));
  for (const std::string other : {"sk-", "sk-12", "sk-2", "", "Bearer sk-1"})
    EXPECT_FALSE(KeyMatches(&other, "sk-1")) << other;
  EXPECT_FALSE(KeyMatches(nullptr, "sk-1"));
  const std::string bearer = "Bearer sk-1";
  EXPECT_TRUE(BearerMatches(&bearer, "sk-1"));
  EXPECT_FALSE(BearerMatches(&key, "sk-1"));
}

}  // namespace
}  // namespace brisk::server
