// The Responses API's store (server/response_store.h): its three bounds (count, bytes, TTL from
// creation, on an injected clock), least-recently-used eviction, replacement and deletion.
#include "server/response_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<StoredResponse> Response(const std::string& id, size_t text_bytes = 10) {
  auto r = std::make_shared<StoredResponse>();
  r->id = id;
  r->response = Json{{"id", id}};
  r->conversation =
      Json::array({Json{{"role", "user"}, {"content", std::string(text_bytes, 'x')}}});
  return r;
}

struct FakeClock {
  double now = 1000;
  ResponseStore::Clock fn() {
    return [this] { return now; };
  }
};

TEST(ResponseStoreTest, PutGetDelete) {
  ResponseStore store({});
  EXPECT_EQ(store.Get("resp_1"), nullptr);
  ASSERT_TRUE(store.Put(Response("resp_1")));
  auto got = store.Get("resp_1");
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->response["id"], "resp_1");
  EXPECT_EQ(store.stats().responses, 1u);
  EXPECT_EQ(store.stats().bytes, ResponseStore::SizeOf(*got));
  EXPECT_TRUE(store.Delete("resp_1"));
  EXPECT_FALSE(store.Delete("resp_1"));
  EXPECT_EQ(store.Get("resp_1"), nullptr);
  EXPECT_EQ(store.stats().responses, 0u);
  EXPECT_EQ(store.stats().bytes, 0u);
  // A response taken before its deletion stays valid for its holder.
  ASSERT_TRUE(store.Put(Response("resp_2")));
  auto held = store.Get("resp_2");
  store.Delete("resp_2");
  EXPECT_EQ(held->id, "resp_2");
}

TEST(ResponseStoreTest, CountBoundEvictsTheLeastRecentlyUsed) {
  ResponseStoreLimits limits;
  limits.max_responses = 3;
  ResponseStore store(limits);
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(store.Put(Response(id)));
  ASSERT_NE(store.Get("a"), nullptr);  // a is now the most recently used; b the least
  ASSERT_TRUE(store.Put(Response("d")));
  EXPECT_EQ(store.Get("b"), nullptr);
  for (const char* id : {"a", "c", "d"}) EXPECT_NE(store.Get(id), nullptr) << id;
  EXPECT_EQ(store.stats().responses, 3u);
  EXPECT_EQ(store.stats().evicted, 1u);
}

TEST(ResponseStoreTest, ByteBoundEvictsUntilTheNewOneFits) {
  const size_t one = ResponseStore::SizeOf(*Response("a", 100));
  ResponseStoreLimits limits;
  limits.max_bytes = 3 * one;
  ResponseStore store(limits);
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(store.Put(Response(id, 100)));
  EXPECT_EQ(store.stats().bytes, 3 * one);
  // Twice the size of one: the two least recently used go.
  ASSERT_TRUE(store.Put(Response("d", 100 + one)));
  EXPECT_EQ(store.Get("a"), nullptr);
  EXPECT_EQ(store.Get("b"), nullptr);
  EXPECT_NE(store.Get("c"), nullptr);
  EXPECT_NE(store.Get("d"), nullptr);
  EXPECT_LE(store.stats().bytes, limits.max_bytes);
  // Larger than the whole budget: refused, nothing evicted for it.
  EXPECT_FALSE(store.Put(Response("huge", 4 * one)));
  EXPECT_EQ(store.Get("huge"), nullptr);
  EXPECT_NE(store.Get("c"), nullptr);
}

TEST(ResponseStoreTest, TtlCountsFromCreationNotUse) {
  FakeClock clock;
  ResponseStoreLimits limits;
  limits.ttl_s = 60;
  ResponseStore store(limits, clock.fn());
  ASSERT_TRUE(store.Put(Response("old")));
  clock.now += 30;
  ASSERT_TRUE(store.Put(Response("new")));
  clock.now += 29;
  EXPECT_NE(store.Get("old"), nullptr);  // 59 s: alive (and used: still expires at 60 s)
  clock.now += 1;
  EXPECT_EQ(store.Get("old"), nullptr);
  EXPECT_NE(store.Get("new"), nullptr);
  EXPECT_FALSE(store.Delete("old"));
  clock.now += 30;
  EXPECT_EQ(store.Get("new"), nullptr);
  EXPECT_EQ(store.stats().expired, 2u);
  EXPECT_EQ(store.stats().responses, 0u);
  EXPECT_EQ(store.stats().bytes, 0u);
}

TEST(ResponseStoreTest, ReplacingAnIdKeepsOneEntry) {
  ResponseStore store({});
  ASSERT_TRUE(store.Put(Response("a", 10)));
  ASSERT_TRUE(store.Put(Response("a", 500)));
  EXPECT_EQ(store.stats().responses, 1u);
  EXPECT_EQ(store.stats().bytes, ResponseStore::SizeOf(*Response("a", 500)));
  EXPECT_EQ(store.Get("a")->conversation[0]["content"].get<std::string>().size(), 500u);
}

TEST(ResponseStoreTest, ZeroResponsesStoresNothing) {
  ResponseStoreLimits limits;
  limits.max_responses = 0;
  ResponseStore store(limits);
  EXPECT_FALSE(store.Put(Response("a")));
  EXPECT_EQ(store.Get("a"), nullptr);
}

TEST(ResponseStoreTest, ConcurrentUseStaysWithinBounds) {
  ResponseStoreLimits limits;
  limits.max_responses = 50;
  ResponseStore store(limits);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string id = std::to_string(t) + "-" + std::to_string(i);
        store.Put(Response(id));
        store.Get(std::to_string(t) + "-" + std::to_string(i / 2));
        if (i % 7 == 0) store.Delete(id);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(store.stats().responses, 50u);
}

}  // namespace
}  // namespace brisk::server
