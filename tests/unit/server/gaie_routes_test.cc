// What a Gateway API Inference Extension endpoint picker and a Kubernetes readiness probe read
// from a server with a model loaded (the golden tiny model, a real engine): GET /ready is 200,
// then 503 "draining" after SIGTERM's BeginDrain while /health keeps its own answer, and 503
// "stalled" when work is held and no step ends for the watchdog's period (a hand-driven clock);
// GET /metrics has vllm:cache_config_info whose block_size / num_gpu_blocks are /props's.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "engine/engine.h"
#include "engine/tiny_model_fixture.h"
#include "server/api_server.h"
#include "server_test_util.h"

namespace brisk::server {
namespace {

using Json = nlohmann::json;

class GaieRoutesTest : public test::TinyModelTest {
 protected:
  void SetUp() override {
    TinyModelTest::SetUp();
    if (HasFatalFailure()) return;
    EngineConfig c;
    c.threads = 1;
    auto e = Engine::Create(*model_, tok_.get(), c);
    ASSERT_TRUE(e.ok()) << e.message();
    engine_ = std::move(e).value();
    ServerOptions o;
    o.model_id = "tiny";
    o.clock = [this] { return now_; };
    api_ = std::make_unique<ApiServer>(o, &metrics_, nullptr);
    LoadedModel lm;
    lm.engine = engine_.get();
    lm.tokenizer = tok_.get();
    api_->SetLoaded(lm);
  }

  HttpResponse Get(const std::string& path) {
    HttpRequest r;
    r.method = "GET";
    r.target = r.path = path;
    auto ex = std::make_shared<testutil::FakeExchange>();
    api_->Handle(std::move(r), ex);
    EXPECT_EQ(ex->responses, 1);
    return ex->last;
  }

  std::unique_ptr<Engine> engine_;
  ServerMetrics metrics_;
  std::unique_ptr<ApiServer> api_;
  double now_ = 1000;  // GET /ready's clock
};

TEST_F(GaieRoutesTest, ReadyUntilDraining) {
  HttpResponse r = Get("/ready");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["status"], "ready");
  EXPECT_EQ(Get("/health").status, 200);
  api_->BeginDrain();
  r = Get("/ready");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Json::parse(r.body)["status"], "draining");
  EXPECT_EQ(Json::parse(Get("/health").body)["status"], "draining");  // unchanged behaviour
}

TEST_F(GaieRoutesTest, StalledWhileWorkIsHeldAndNoStepEnds) {
  // A request the server counts but never submits (GenerationStarted alone): work is held and the
  // engine's step counter stands still, as when a step never ends.
  EXPECT_EQ(Get("/ready").status, 200);
  api_->GenerationStarted();
  EXPECT_EQ(Get("/ready").status, 200);  // the first look with work starts the clock
  now_ += kEngineStallSeconds - 1;
  EXPECT_EQ(Get("/ready").status, 200);
  now_ += 1;
  const HttpResponse r = Get("/ready");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Json::parse(r.body)["status"], "stalled");
  EXPECT_EQ(Get("/health").status, 200);  // not a liveness failure: no restart for a stall
  api_->GenerationFinished();
  EXPECT_EQ(Get("/ready").status, 200);  // nothing held: ready again
}

TEST_F(GaieRoutesTest, CacheConfigInfoIsTheKvCacheOfProps) {
  const Json kv = Json::parse(Get("/props").body)["kv"];
  ASSERT_GT(kv["blocks"].get<int>(), 0);
  const std::string text = Get("/metrics").body;
  // One sample, value 1, with the labels GAIE reads (block_size, num_gpu_blocks).
  const std::regex sample(
      "\nvllm:cache_config_info\\{model_name=\"tiny\",block_size=\"(\\d+)\",cache_dtype=\"(\\w+)\","
      "enable_prefix_caching=\"(True|False)\",engine=\"0\",num_gpu_blocks=\"(\\d+)\"\\} 1\\.0\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, sample)) << text.substr(0, 2000);
  EXPECT_EQ(std::stoi(m[1]), kv["block_size"].get<int>());
  EXPECT_EQ(m[2], kv["type"].get<std::string>());
  EXPECT_EQ(m[3], kv["prefix_caching"].get<bool>() ? "True" : "False");
  EXPECT_EQ(std::stoi(m[4]), kv["blocks"].get<int>());
  EXPECT_NE(text.find("# TYPE vllm:cache_config_info gauge\n"), std::string::npos);
  // The other three GAIE gauges, idle.
  for (const char* name :
       {"vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc"})
    EXPECT_NE(text.find(std::string("\n") + name + "{model_name=\"tiny\"} 0.0\n"),
              std::string::npos)
        << name;
}

}  // namespace
}  // namespace brisk::server
