// `brisk serve --kv-events` end to end: the real binary on the golden tiny model publishes a
// BlockStored for a completion's prompt and AllBlocksCleared after POST /reset_prefix_cache, on
// the topic given; a malformed endpoint stops it at start with a message naming the flag.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "msgpack_reader.h"
#include "test_paths.h"

namespace brisk {
namespace {

std::string Model() {
  return test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf");
}

// `brisk serve` as a child process whose stdout and stderr come back through one pipe.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      close(fds[0]);
      std::vector<char*> argv;
      const std::string bin = test::BriskBinary();
      argv.push_back(const_cast<char*>(bin.c_str()));
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  // The first output line containing `what` (consuming lines before it); "" after timeout_s or
  // once the process closed its output.
  std::string LineWith(const std::string& what, double timeout_s) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      for (size_t nl; (nl = buf_.find('\n')) != std::string::npos;) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        log_ += line + "\n";
        if (line.find(what) != std::string::npos) return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return {};
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, int(left.count())) <= 0) return {};
      char chunk[4096];
      const ssize_t n = read(out_, chunk, sizeof(chunk));
      if (n <= 0) return {};
      buf_.append(chunk, size_t(n));
    }
  }
  // Waits for the exit; its status code, or -1.
  int Wait() {
    int status = 0;
    LineWith("\x01never", 30);  // drain the output until it closes
    if (waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& log() const { return log_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buf_, log_;
};

// One HTTP/1.1 POST on 127.0.0.1:port; the status code (0 on a transport failure).
int Post(int port, const std::string& path, const std::string& body) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return 0;
  }
  const std::string req = "POST " + path +
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          "Content-Length: " +
                          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  if (write(fd, req.data(), req.size()) != ssize_t(req.size())) {
    close(fd);
    return 0;
  }
  std::string resp;
  char chunk[4096];
  for (ssize_t n; (n = read(fd, chunk, sizeof(chunk))) > 0;) resp.append(chunk, size_t(n));
  close(fd);
  return resp.size() > 12 ? std::atoi(resp.c_str() + 9) : 0;  // "HTTP/1.1 200"
}

// The type names of the events of the next batch on `sub` (empty on timeout).
std::vector<std::string> NextBatchEvents(void* sub, int timeout_ms, std::string* topic) {
  zmq_pollitem_t item{sub, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&item, 1, timeout_ms) <= 0) return {};
  std::vector<std::string> frames;
  for (;;) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, sub, 0) < 0) break;
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
    const bool more = zmq_msg_more(&m);
    zmq_msg_close(&m);
    if (!more) break;
  }
  if (frames.size() != 3) return {"<" + std::to_string(frames.size()) + " frames>"};
  *topic = frames[0];
  std::vector<std::string> names;
  auto batch = test::MsgReader(frames[2]).ReadAll();
  if (!batch) return {"<not msgpack>"};
  for (const auto& e : batch->a.at(1).a) names.push_back(e.a.at(0).s);
  return names;
}

TEST(ServeKvEvents, CompletionAndResetReachASubscriber) {
  ServeProcess serve({"serve", "-m", Model(), "--port", "0", "-t", "1", "--kv-events",
                      "tcp://127.0.0.1:*", "--kv-events-topic", "kv@e2e@tiny"});
  const std::string kv = serve.LineWith("KV events on ", 30);
  ASSERT_FALSE(kv.empty()) << serve.log();
  const std::string endpoint = kv.substr(kv.find("tcp://"));
  const std::string listening = serve.LineWith("listening on http://127.0.0.1:", 30);
  ASSERT_FALSE(listening.empty()) << serve.log();
  const int port = std::atoi(listening.c_str() + listening.rfind(':') + 1);
  ASSERT_FALSE(serve.LineWith("ready", 60).empty()) << serve.log();

  void* ctx = zmq_ctx_new();
  void* sub = zmq_socket(ctx, ZMQ_SUB);
  const int linger = 0;
  zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof(linger));
  ASSERT_EQ(zmq_connect(sub, endpoint.c_str()), 0) << endpoint;
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "kv@e2e", 6);
  // ZeroMQ's slow joiner: batches published before the subscription reaches the server are
  // lost. Resets (each one an AllBlocksCleared batch) until one arrives prove it is live.
  std::string topic;
  bool live = false;
  for (int i = 0; i < 50 && !live; ++i) {
    ASSERT_EQ(Post(port, "/reset_prefix_cache", ""), 200);
    for (const std::string& e : NextBatchEvents(sub, 200, &topic)) live |= e == "AllBlocksCleared";
  }
  ASSERT_TRUE(live) << "no AllBlocksCleared after 50 resets";
  while (!NextBatchEvents(sub, 100, &topic).empty()) {
  }

  std::string ids;  // 40 token ids: two full 16-token blocks
  for (int i = 0; i < 40; ++i) ids += (i ? "," : "") + std::to_string(100 + 7 * i);
  EXPECT_EQ(Post(port, "/v1/completions", "{\"prompt\": [" + ids + "], \"max_tokens\": 2}"), 200);
  bool stored = false;
  for (int i = 0; i < 20 && !stored; ++i)
    for (const std::string& e : NextBatchEvents(sub, 500, &topic)) stored |= e == "BlockStored";
  EXPECT_TRUE(stored) << serve.log();
  EXPECT_EQ(topic, "kv@e2e@tiny");

  EXPECT_EQ(Post(port, "/reset_prefix_cache", ""), 200);
  bool cleared = false;
  for (int i = 0; i < 20 && !cleared; ++i)
    for (const std::string& e : NextBatchEvents(sub, 500, &topic))
      cleared |= e == "AllBlocksCleared";
  EXPECT_TRUE(cleared);
  zmq_close(sub);
  zmq_ctx_term(ctx);
}

TEST(ServeKvEvents, MalformedEndpointStopsTheStart) {
  ServeProcess serve({"serve", "-m", Model(), "--port", "0", "--kv-events", "localhost:5557"});
  EXPECT_EQ(serve.Wait(), 1);
  EXPECT_NE(serve.log().find("--kv-events localhost:5557: expected a ZeroMQ endpoint"),
            std::string::npos)
      << serve.log();
  EXPECT_EQ(serve.log().find("listening"), std::string::npos) << "must fail before listening";
}

}  // namespace
}  // namespace brisk
