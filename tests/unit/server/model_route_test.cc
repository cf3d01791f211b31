// GET /v1/models/{id} (OpenAI's models.retrieve) without a model loaded: the served id answers
// with the same object GET /v1/models lists, any other id is OpenAI's 404 model_not_found.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/api_server.h"
#include "server_test_util.h"

namespace brisk::server {
namespace {

using Json = nlohmann::json;
using testutil::FakeExchange;

HttpResponse Get(const std::string& path, bool with_key = true) {
  ServerOptions o;
  o.api_key = "sk-1";
  o.model_id = "Qwen/Qwen2.5-0.5B";
  ApiServer api(o, nullptr, nullptr);
  HttpRequest r;
  r.method = "GET";
  r.target = r.path = path;
  if (with_key) r.headers = {{"authorization", "Bearer sk-1"}};
  auto ex = std::make_shared<FakeExchange>();
  api.Handle(std::move(r), ex);
  EXPECT_EQ(ex->responses, 1);
  return ex->last;
}

TEST(ModelRouteTest, TheServedModelIsTheListsEntry) {
  const HttpResponse list = Get("/v1/models");
  ASSERT_EQ(list.status, 200) << list.body;
  const Json entry = Json::parse(list.body)["data"][0];
  // SDKs percent-encode the id (it may hold a '/'); /models/ is the unversioned alias.
  for (const char* path : {"/v1/models/Qwen/Qwen2.5-0.5B", "/v1/models/Qwen%2FQwen2.5-0.5B",
                           "/models/Qwen%2fQwen2.5-0.5B"}) {
    SCOPED_TRACE(path);
    const HttpResponse r = Get(path);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(Json::parse(r.body), entry);
    EXPECT_EQ(entry["object"], "model");
  }
}

TEST(ModelRouteTest, AnotherIdIsA404) {
  for (const char* path :
       {"/v1/models/gpt-4o", "/v1/models/Qwen%2", "/v1/models/qwen%2Fqwen2.5-0.5b"}) {
    SCOPED_TRACE(path);
    const HttpResponse r = Get(path);
    EXPECT_EQ(r.status, 404) << r.body;
    const Json e = Json::parse(r.body)["error"];
    EXPECT_EQ(e["type"], "not_found_error");
    EXPECT_EQ(e["code"], "model_not_found");
    EXPECT_NE(e["message"].get<std::string>().find("does not exist"), std::string::npos);
  }
}

TEST(ModelRouteTest, NeedsTheKey) {
  EXPECT_EQ(Get("/v1/models/Qwen%2FQwen2.5-0.5B", false).status, 401);
}

}  // namespace
}  // namespace brisk::server
