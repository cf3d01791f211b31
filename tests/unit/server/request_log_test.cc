#include "server/request_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace brisk::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh directory per test, removed afterwards.
class RequestLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("brisk_request_log_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> Lines(const fs::path& p) {
    std::ifstream in(p);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  fs::path dir_;
};

RequestLogEntry Entry() {
  RequestLogEntry e;
  e.id = "chatcmpl-42";
  e.model = "qwen2.5-0.5b";
  e.finish_reason = "stop";
  e.usage.prompt_tokens = 12;
  e.usage.completion_tokens = 11;
  e.usage.cached_tokens = 8;
  e.timings.queued_s = 0.0015;
  e.timings.ttft_s = 0.125;
  e.timings.decode_s = 0.5;  // 10 gaps: 50 ms per token
  e.timings.e2e_s = 0.625;
  e.timings.preemptions = 2;
  e.stream = true;
  e.status = 200;
  return e;
}

// 2025-01-02T03:04:05.678Z
constexpr double kTime = 1735787045.678;

TEST_F(RequestLogTest, WritesOneJsonLinePerRequestWithTheFields) {
  auto log = RequestLog::Open((dir_ / "req.jsonl").string(), [] { return kTime; });
  ASSERT_TRUE(log.ok()) << log.message();
  (*log)->Write(Entry());
  RequestLogEntry second = Entry();
  second.id = "cmpl-7";
  second.stream = false;
  second.status = 499;
  second.finish_reason = "cancelled";
  second.batch_size = 6;
  second.error = "client disconnected";
  (*log)->Write(second);
  ASSERT_TRUE((*log)->Flush(10));
  EXPECT_EQ((*log)->counters().lines_written, 2u);
  EXPECT_EQ((*log)->counters().write_errors, 0u);
  EXPECT_EQ((*log)->counters().lines_dropped, 0u);

  const auto lines = Lines(dir_ / "req.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  const json a = json::parse(lines[0]);
  EXPECT_EQ(a.at("id"), "chatcmpl-42");
  EXPECT_EQ(a.at("time"), "2025-01-02T03:04:05.678Z");
  EXPECT_EQ(a.at("model"), "qwen2.5-0.5b");
  EXPECT_EQ(a.at("prompt_tokens"), 12);
  EXPECT_EQ(a.at("completion_tokens"), 11);
  EXPECT_EQ(a.at("cached_tokens"), 8);
  EXPECT_DOUBLE_EQ(a.at("queue_ms").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(a.at("ttft_ms").get<double>(), 125);
  EXPECT_DOUBLE_EQ(a.at("tpot_ms").get<double>(), 50);
  EXPECT_DOUBLE_EQ(a.at("e2e_ms").get<double>(), 625);
  EXPECT_EQ(a.at("finish_reason"), "stop");
  EXPECT_EQ(a.at("preemptions"), 2);
  EXPECT_EQ(a.at("stream"), true);
  EXPECT_EQ(a.at("status"), 200);
  EXPECT_FALSE(a.contains("batch_size"));
  EXPECT_FALSE(a.contains("error"));
  EXPECT_EQ(a.size(), 14u);

  const json b = json::parse(lines[1]);
  EXPECT_EQ(b.at("id"), "cmpl-7");
  EXPECT_EQ(b.at("stream"), false);
  EXPECT_EQ(b.at("status"), 499);
  EXPECT_EQ(b.at("finish_reason"), "cancelled");
  EXPECT_EQ(b.at("batch_size"), 6);
  EXPECT_EQ(b.at("error"), "client disconnected");
}

TEST(RequestLogLine, NullLatenciesWithoutEnoughTokens) {
  RequestLogEntry e = Entry();
  e.usage.completion_tokens = 0;
  json j = json::parse(RequestLogLine(e, kTime));
  EXPECT_TRUE(j.at("ttft_ms").is_null());
  EXPECT_TRUE(j.at("tpot_ms").is_null());
  EXPECT_DOUBLE_EQ(j.at("e2e_ms").get<double>(), 625);

  e.usage.completion_tokens = 1;
  j = json::parse(RequestLogLine(e, kTime));
  EXPECT_DOUBLE_EQ(j.at("ttft_ms").get<double>(), 125);
  EXPECT_TRUE(j.at("tpot_ms").is_null());
}

TEST(RequestLogLine, SurvivesHostileStringsAndClocks) {
  RequestLogEntry e = Entry();
  e.id = "id\xFF\"\n";  // invalid UTF-8, quote, newline
  e.model = "m\\\x01";
  e.timings.e2e_s = NAN;
  const std::string line = RequestLogLine(e, -5);  // a broken clock
  EXPECT_EQ(line.find('\n'), std::string::npos);   // one line, whatever the input
  const json j = json::parse(line);
  EXPECT_EQ(j.at("id"), "id\xEF\xBF\xBD\"\n");
  EXPECT_EQ(j.at("model"), "m\\\x01");
  EXPECT_TRUE(j.at("e2e_ms").is_null());
  EXPECT_EQ(j.at("time"), "1970-01-01T00:00:00.000Z");
}

TEST_F(RequestLogTest, AppendsToAnExistingFile) {
  const fs::path p = dir_ / "old.jsonl";
  std::ofstream(p) << "{\"earlier\":true}\n";
  {
    auto log = RequestLog::Open(p.string());
    ASSERT_TRUE(log.ok()) << log.message();
    (*log)->Write(Entry());
  }  // the destructor writes the queued line
  {
    auto log = RequestLog::Open(p.string());  // reopened: appends again
    ASSERT_TRUE(log.ok()) << log.message();
    (*log)->Write(Entry());
  }  // the destructor writes the queued line
  const auto lines = Lines(p);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "{\"earlier\":true}");
  EXPECT_EQ(json::parse(lines[2]).at("id"), "chatcmpl-42");
}

TEST_F(RequestLogTest, UnwritablePathsGiveAClearStatus) {
  const std::string missing = (dir_ / "no" / "such" / "dir" / "log.jsonl").string();
  auto a = RequestLog::Open(missing);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.message().find(missing), std::string::npos) << a.message();
  EXPECT_NE(a.message().find("No such file or directory"), std::string::npos) << a.message();

  auto b = RequestLog::Open(dir_.string());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.message().find(dir_.string()), std::string::npos) << b.message();
  EXPECT_NE(b.message().find("directory"), std::string::npos) << b.message();

  auto c = RequestLog::Open("");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("empty path"), std::string::npos) << c.message();

  // A FIFO nobody reads must fail at once rather than block the server start.
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto d = RequestLog::Open(fifo.string());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.message().find("FIFO with no reader"), std::string::npos) << d.message();
}

TEST_F(RequestLogTest, WriteFailuresAreCounted) {
  auto log = RequestLog::Open("/dev/full");  // every write fails with ENOSPC
  ASSERT_TRUE(log.ok()) << log.message();
  for (int i = 0; i < 3; ++i) (*log)->Write(Entry());
  ASSERT_TRUE((*log)->Flush(10));
  EXPECT_EQ((*log)->counters().write_errors, 3u);
  EXPECT_EQ((*log)->counters().lines_written, 0u);
}

// A FIFO whose reader never reads (issue 35: the engine thread used to block in write() and all
// generation froze): Write() must return at once however full the pipe is, drop what does not fit
// the queue, count it, and the log must still close without waiting for the reader.
TEST_F(RequestLogTest, AStuckReaderNeverBlocksWrite) {
  std::signal(SIGPIPE, SIG_IGN);  // as brisk serve does: the reader closing ends in EPIPE
  const fs::path fifo = dir_ / "stuck";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // opened, never read
  ASSERT_GE(reader, 0);
  constexpr size_t kQueue = 64 << 10;
  auto log = RequestLog::Open(fifo.string(), {}, kQueue);
  ASSERT_TRUE(log.ok()) << log.message();
  RequestLogEntry e = Entry();
  e.error = std::string(1000, 'x');
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kLines = 2000;  // ~2.3 MB: far more than the pipe (64 KiB) and the queue hold
  for (int i = 0; i < kLines; ++i) (*log)->Write(e);
  const double write_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(write_s, 5.0);  // a blocking write would never return at all
  EXPECT_FALSE((*log)->Flush(0.2));
  const RequestLogCounters c = (*log)->counters();
  EXPECT_GT(c.lines_dropped, 0u);
  EXPECT_LT(c.lines_written, uint64_t(kLines));
  const auto t1 = std::chrono::steady_clock::now();
  log->reset();  // the writer is stuck in write(): abandoned after kRequestLogCloseSeconds
  const double close_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  EXPECT_LT(close_s, kRequestLogCloseSeconds + 2);
  ::close(reader);  // the abandoned writer's write() now fails (EPIPE) and it exits
}

TEST_F(RequestLogTest, ConcurrentWritersNeverInterleaveLines) {
  const fs::path p = dir_ / "many.jsonl";
  auto log = RequestLog::Open(p.string());
  ASSERT_TRUE(log.ok()) << log.message();
  constexpr int kThreads = 8, kPerThread = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        RequestLogEntry e = Entry();
        e.id = std::to_string(t) + "-" + std::to_string(i);
        e.error = std::string(500 + i, 'x');  // long lines make interleaving visible
        (*log)->Write(e);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE((*log)->Flush(30));
  EXPECT_EQ((*log)->counters().lines_written, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ((*log)->counters().lines_dropped, 0u);

  const auto lines = Lines(p);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  std::set<std::string> ids;
  for (const std::string& line : lines) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << line.substr(0, 80);
    ids.insert(j.at("id").get<std::string>());
  }
  EXPECT_EQ(ids.size(), lines.size());
}

}  // namespace
}  // namespace brisk::server
