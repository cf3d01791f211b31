// The connection admission policy as plain bookkeeping: who is evicted, who is refused, and the
// counts under random sequences of events.
#include "server/connection_admission.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace brisk::server {
namespace {

TEST(ConnectionAdmission, NoLimitsAdmitsEveryone) {
  ConnectionAdmission a({0, 0});
  for (uint64_t id = 1; id <= 5000; ++id) {
    const auto d = a.Admit(id, "10.0.0.1", double(id));
    ASSERT_TRUE(d.admit);
    ASSERT_TRUE(d.evict.empty());
  }
  EXPECT_EQ(a.counters().open, 5000u);
  EXPECT_EQ(a.open_from("10.0.0.1"), 5000u);
}

TEST(ConnectionAdmission, AtTheLimitTheLongestIdleMakesRoom) {
  ConnectionAdmission a({3, 0});
  ASSERT_TRUE(a.Admit(1, "a", 1).admit);
  ASSERT_TRUE(a.Admit(2, "b", 2).admit);
  ASSERT_TRUE(a.Admit(3, "c", 3).admit);
  a.MarkBusy(1);  // busy connections are never chosen, however old
  const auto d = a.Admit(4, "d", 4);
  ASSERT_TRUE(d.admit);
  EXPECT_EQ(d.evict, std::vector<uint64_t>{2});
  EXPECT_EQ(a.counters().open, 3u);
  EXPECT_EQ(a.counters().evicted_total, 1u);
  a.Remove(2);  // the eviction completed: nothing changes in the counts
  EXPECT_EQ(a.counters().open, 3u);
  EXPECT_EQ(a.open_from("b"), 0u);
}

TEST(ConnectionAdmission, IdleTimeCountsFromWhenTheWaitBegan) {
  ConnectionAdmission a({2, 0});
  ASSERT_TRUE(a.Admit(1, "a", 1).admit);
  ASSERT_TRUE(a.Admit(2, "a", 2).admit);
  a.MarkBusy(1);
  a.MarkIdle(1, 10);  // served a request, back to keep-alive at t=10: now the freshest
  const auto d = a.Admit(3, "b", 11);
  ASSERT_TRUE(d.admit);
  EXPECT_EQ(d.evict, std::vector<uint64_t>{2});
}

TEST(ConnectionAdmission, AllBusyMeansRefusalWithAReason) {
  ConnectionAdmission a({2, 0});
  ASSERT_TRUE(a.Admit(1, "a", 1).admit);
  ASSERT_TRUE(a.Admit(2, "b", 2).admit);
  a.MarkBusy(1);
  a.MarkBusy(2);
  const auto d = a.Admit(3, "c", 3);
  EXPECT_FALSE(d.admit);
  EXPECT_TRUE(d.evict.empty());
  EXPECT_NE(d.refusal.find("--max-connections 2"), std::string::npos) << d.refusal;
  EXPECT_EQ(a.counters().refused_total, 1u);
  EXPECT_EQ(a.counters().open, 2u);
  a.Remove(3);  // the refused connection was never counted
  EXPECT_EQ(a.counters().open, 2u);
  a.Remove(1);
  EXPECT_TRUE(a.Admit(4, "c", 4).admit);
}

TEST(ConnectionAdmission, PerClientLimitEvictsOnlyThatClientsConnections) {
  ConnectionAdmission a({100, 2});
  ASSERT_TRUE(a.Admit(1, "flood", 1).admit);
  ASSERT_TRUE(a.Admit(2, "other", 2).admit);  // older than flood's second, other client
  ASSERT_TRUE(a.Admit(3, "flood", 3).admit);
  const auto d = a.Admit(4, "flood", 4);
  ASSERT_TRUE(d.admit);
  EXPECT_EQ(d.evict, std::vector<uint64_t>{1});
  EXPECT_EQ(a.open_from("flood"), 2u);
  EXPECT_EQ(a.open_from("other"), 1u);
  a.MarkBusy(3);
  a.MarkBusy(4);
  const auto refused = a.Admit(5, "flood", 5);
  EXPECT_FALSE(refused.admit);
  EXPECT_NE(refused.refusal.find("too many connections from flood"), std::string::npos);
  EXPECT_NE(refused.refusal.find("--max-connections-per-client 2"), std::string::npos);
  EXPECT_TRUE(a.Admit(6, "other", 6).admit);
}

TEST(ConnectionAdmission, AnEvictionThatFoundTheConnectionBusyCountsItAgain) {
  ConnectionAdmission a({1, 0});
  ASSERT_TRUE(a.Admit(1, "a", 1).admit);
  const auto d = a.Admit(2, "b", 2);
  ASSERT_EQ(d.evict, std::vector<uint64_t>{1});
  a.MarkBusy(1);  // its header completed before the eviction ran: ignored, it is evicting
  a.CancelEviction(1);
  EXPECT_EQ(a.counters().open, 2u);  // over the limit until one closes
  a.Remove(1);
  EXPECT_EQ(a.counters().open, 1u);
  a.Remove(2);
  EXPECT_EQ(a.counters().open, 0u);
}

// Random events against a model of the rules: the counts always match, a busy connection is never
// chosen, the chosen one is the longest idle among the candidates, and limits hold whenever no
// eviction was cancelled.
TEST(ConnectionAdmission, RandomEventsKeepTheBookkeepingExact) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 200; ++round) {
    const int max_total = 1 + int(rng() % 8), max_client = int(rng() % 4);
    ConnectionAdmission a({max_total, max_client});
    struct Conn {
      std::string client;
      bool idle = true, evicting = false;
      double since = 0;
    };
    std::map<uint64_t, Conn> live;  // admitted, not removed
    uint64_t next = 1;
    double now = 0;
    bool cancelled = false;
    for (int step = 0; step < 300; ++step) {
      now += 1;
      const int op = int(rng() % 5);
      std::vector<uint64_t> ids;
      for (const auto& [id, c] : live) ids.push_back(id);
      const uint64_t pick = ids.empty() ? 0 : ids[rng() % ids.size()];
      if (op == 0 || ids.empty()) {
        const std::string client = "c" + std::to_string(rng() % 3);
        const uint64_t id = next++;
        const auto d = a.Admit(id, client, now);
        for (uint64_t v : d.evict) {
          Conn& c = live.at(v);
          ASSERT_TRUE(c.idle && !c.evicting) << "evicted a busy or evicting connection";
          // The longest idle among its candidates, so at least among its own client's.
          for (const auto& [oid, o] : live) {
            if (oid != v && o.idle && !o.evicting && o.client == c.client) {
              ASSERT_GT(o.since, c.since) << "a longer-idle connection was passed over";
            }
          }
          c.evicting = true;
        }
        if (d.admit) live[id] = Conn{client, true, false, now};
      } else if (op == 1) {
        a.MarkBusy(pick);
        if (!live[pick].evicting) live[pick].idle = false;
      } else if (op == 2) {
        a.MarkIdle(pick, now);
        Conn& c = live[pick];
        if (!c.evicting && !c.idle) c.idle = true, c.since = now;
      } else if (op == 3) {
        a.Remove(pick);
        live.erase(pick);
      } else if (live[pick].evicting) {
        a.CancelEviction(pick);
        live[pick].evicting = false;
        live[pick].idle = false;
        cancelled = true;
      }
      size_t open = 0;
      std::map<std::string, size_t> per;
      for (const auto& [id, c] : live)
        if (!c.evicting) open++, per[c.client]++;
      ASSERT_EQ(a.counters().open, open) << "round " << round << " step " << step;
      for (const auto& [client, n] : per) ASSERT_EQ(a.open_from(client), n);
      if (!cancelled) {
        ASSERT_LE(open, size_t(max_total));
        if (max_client > 0)
          for (const auto& [client, n] : per) ASSERT_LE(n, size_t(max_client));
      }
    }
  }
}

}  // namespace
}  // namespace brisk::server
