// The Responses API's routes in ApiServer::Handle, without sockets or a model: GET and DELETE
// /v1/responses/{id} read the store (no model needed), unknown ids are OpenAI-shaped 404s, other
// methods 405, and POST /v1/responses waits for the model like every generation route.
#include "server/responses_route.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "server/api_server.h"
#include "server_test_util.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

using testutil::FakeExchange;

HttpResponse Send(ApiServer& api, const std::string& method, const std::string& path) {
  HttpRequest r;
  r.method = method;
  r.target = r.path = path;
  r.body = R"({"input": "hi"})";
  auto ex = std::make_shared<FakeExchange>();
  api.Handle(std::move(r), ex);
  EXPECT_EQ(ex->responses, 1);
  return ex->last;
}

void ExpectOpenAiError(const HttpResponse& r, int status, const char* type) {
  EXPECT_EQ(r.status, status) << r.body;
  const Json j = Json::parse(r.body);
  EXPECT_EQ(j["error"]["type"], type) << r.body;
  EXPECT_TRUE(j["error"]["message"].is_string()) << r.body;
}

TEST(ResponsesRouteTest, IdInPath) {
  EXPECT_EQ(ResponseIdInPath("/v1/responses/resp_1"), "resp_1");
  EXPECT_EQ(ResponseIdInPath("/v1/responses/"), std::nullopt);
  EXPECT_EQ(ResponseIdInPath("/v1/responses"), std::nullopt);
  EXPECT_EQ(ResponseIdInPath("/v1/responses/resp_1/input_items"), std::nullopt);
}

TEST(ResponsesRouteTest, GetAndDeleteReadTheStore) {
  ApiServer api(ServerOptions{}, nullptr, nullptr);
  auto stored = std::make_shared<StoredResponse>();
  stored->id = "resp_1";
  stored->response = Json{{"id", "resp_1"}, {"object", "response"}};
  ASSERT_TRUE(api.responses().Put(stored));
  HttpResponse got = Send(api, "GET", "/v1/responses/resp_1");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(Json::parse(got.body), stored->response);
  HttpResponse del = Send(api, "DELETE", "/v1/responses/resp_1");
  EXPECT_EQ(del.status, 200);
  EXPECT_EQ(Json::parse(del.body),
            Json::parse(R"({"id": "resp_1", "object": "response.deleted", "deleted": true})"));
  ExpectOpenAiError(Send(api, "GET", "/v1/responses/resp_1"), 404, "not_found_error");
  ExpectOpenAiError(Send(api, "DELETE", "/v1/responses/resp_1"), 404, "not_found_error");
  ExpectOpenAiError(Send(api, "PUT", "/v1/responses/resp_1"), 405, "invalid_request_error");
}

TEST(ResponsesRouteTest, CreateWaitsForTheModelAndTheKey) {
  ServerOptions o;
  o.api_key = "sk-1";
  ApiServer api(o, nullptr, nullptr);
  ExpectOpenAiError(Send(api, "POST", "/v1/responses"), 401, "authentication_error");
  ExpectOpenAiError(Send(api, "GET", "/v1/responses/resp_1"), 401, "authentication_error");
  ApiServer open(ServerOptions{}, nullptr, nullptr);
  ExpectOpenAiError(Send(open, "POST", "/v1/responses"), 503, "unavailable_error");
  ExpectOpenAiError(Send(open, "GET", "/v1/responses"), 405, "invalid_request_error");
}

TEST(ResponsesRouteTest, TheServerStoreHasTheConfiguredLimits) {
  ServerOptions o;
  o.responses.max_responses = 1;
  ApiServer api(o, nullptr, nullptr);
  for (const char* id : {"a", "b"}) {
    auto r = std::make_shared<StoredResponse>();
    r->id = id;
    api.responses().Put(r);
  }
  EXPECT_EQ(api.responses().stats().responses, 1u);
  ExpectOpenAiError(Send(api, "GET", "/v1/responses/a"), 404, "not_found_error");
  EXPECT_EQ(Send(api, "GET", "/v1/responses/b").status, 200);
}

}  // namespace
}  // namespace brisk::server
