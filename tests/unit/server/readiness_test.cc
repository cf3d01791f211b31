// Readiness apart from liveness (server/readiness.h): the watchdog's verdicts on a hand-driven
// clock, the precedence of loading / draining / stalled, and GET /ready on a server without a
// model (503 "loading", no key needed, /health unchanged).
#include "server/readiness.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "server/api_server.h"
#include "server_test_util.h"

namespace brisk::server {
namespace {

TEST(StepWatchdog, AnIdleEngineIsNeverStalled) {
  StepWatchdog w(10);
  for (double t = 0; t <= 1000; t += 50) EXPECT_FALSE(w.Stalled(7, /*has_work=*/false, t)) << t;
}

TEST(StepWatchdog, WorkWithoutAStepForTheWholePeriodIsAStall) {
  StepWatchdog w(10);
  EXPECT_FALSE(w.Stalled(7, true, 100));  // first look: the clock starts here
  EXPECT_FALSE(w.Stalled(7, true, 109.9));
  EXPECT_TRUE(w.Stalled(7, true, 110));
  EXPECT_TRUE(w.Stalled(7, true, 500));
}

TEST(StepWatchdog, AStepRestartsTheClock) {
  StepWatchdog w(10);
  EXPECT_FALSE(w.Stalled(7, true, 100));
  EXPECT_FALSE(w.Stalled(8, true, 109));  // progress
  EXPECT_FALSE(w.Stalled(8, true, 118));
  EXPECT_TRUE(w.Stalled(8, true, 119));
  EXPECT_FALSE(w.Stalled(9, true, 120));  // a stalled engine that recovers is ready again
}

TEST(StepWatchdog, WorkArrivingAfterIdleTimeIsNotAStall) {
  // Idle for an hour, then a request: the hour must not count against the first step.
  StepWatchdog w(10);
  EXPECT_FALSE(w.Stalled(7, false, 0));
  EXPECT_FALSE(w.Stalled(7, false, 3600));
  EXPECT_FALSE(w.Stalled(7, true, 3605));
  EXPECT_TRUE(w.Stalled(7, true, 3610));
}

TEST(StepWatchdog, TheDefaultPeriodIsTheConstant) {
  StepWatchdog w;
  EXPECT_FALSE(w.Stalled(1, true, 0));
  EXPECT_FALSE(w.Stalled(1, true, kEngineStallSeconds - 0.001));
  EXPECT_TRUE(w.Stalled(1, true, kEngineStallSeconds));
}

TEST(Readiness, LoadingThenDrainingThenStalled) {
  EXPECT_EQ(ReadinessOf(false, true, true), Readiness::kLoading);
  EXPECT_EQ(ReadinessOf(true, true, true), Readiness::kDraining);
  EXPECT_EQ(ReadinessOf(true, false, true), Readiness::kStalled);
  EXPECT_EQ(ReadinessOf(true, false, false), Readiness::kReady);
  EXPECT_EQ(ReadinessName(Readiness::kReady), "ready");
  EXPECT_EQ(ReadinessName(Readiness::kLoading), "loading");
  EXPECT_EQ(ReadinessName(Readiness::kDraining), "draining");
  EXPECT_EQ(ReadinessName(Readiness::kStalled), "stalled");
}

HttpResponse Get(ApiServer& api, const std::string& path, const std::string& method = "GET") {
  HttpRequest r;
  r.method = method;
  r.target = r.path = path;
  auto ex = std::make_shared<testutil::FakeExchange>();
  api.Handle(std::move(r), ex);
  EXPECT_EQ(ex->responses, 1);
  return ex->last;
}

TEST(ReadyRoute, LoadingIs503WithoutAKey) {
  ServerOptions o;
  o.api_key = "sk-1";  // probes carry no key: /ready, like /health, must not ask for one
  ApiServer api(o, nullptr, nullptr);
  for (const char* method : {"GET", "HEAD"}) {
    const HttpResponse r = Get(api, "/ready", method);
    EXPECT_EQ(r.status, 503) << method;
    EXPECT_EQ(nlohmann::json::parse(r.body)["status"], "loading");
  }
  EXPECT_EQ(Get(api, "/health").status, 503);
  EXPECT_EQ(nlohmann::json::parse(Get(api, "/health").body)["status"], "loading");
  EXPECT_EQ(Get(api, "/ready", "POST").status, 401);  // not a route for POST: falls to auth
}

}  // namespace
}  // namespace brisk::server
