// Shared helpers of the server unit tests: request limits for the parsers, and an HttpExchange
// that records the one response a route gives without a socket.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "server/http_server.h"
#include "server/openai_request.h"

namespace brisk::server::testutil {

// Limits small enough for tests to reach: 4096 tokens of context, a 1000-token vocabulary, no
// default max_tokens (the server's default: the rest of the context).
inline RequestLimits Limits() {
  RequestLimits l;
  l.max_model_len = 4096;
  l.n_vocab = 1000;
  l.model_id = "qwen2.5-0.5b";
  return l;
}

inline const char* kUser = R"("messages": [{"role": "user", "content": "hi"}])";

// A JSON body mutated at random (1-4 edits: a byte replaced by a JSON-ish or invalid byte, a run
// erased, a piece copied elsewhere), for the parsers' fuzz tests: never empty.
template <typename Rng>
std::string MutatedJson(std::string body, Rng& rng) {
  static const std::string alphabet = "{}[]\",:0123456789.-eE truefalsn\\\x80\xff";
  for (int k = 0, edits = 1 + int(rng() % 4); k < edits; ++k) {
    const size_t at = rng() % body.size();
    switch (rng() % 3) {
      case 0:
        body[at] = alphabet[rng() % alphabet.size()];
        break;
      case 1:
        body.erase(at, 1 + rng() % 8);
        break;
      default:
        body.insert(at, body.substr(rng() % body.size(), 1 + rng() % 12));
    }
    if (body.empty()) body = "{";
  }
  return body;
}

// Records Respond; a stream fails the test (these routes answer with one body).
class FakeExchange : public HttpExchange {
 public:
  void Respond(HttpResponse response) override {
    ++responses;
    last = std::move(response);
  }
  void StartStream(int, std::string, std::vector<std::pair<std::string, std::string>>) override {
    ADD_FAILURE() << "no stream expected from this route";
  }
  void Write(std::string) override {}
  void EndStream() override {}
  void OnDisconnect(std::function<void()>) override {}
  bool disconnected() const override { return false; }
  size_t queued_bytes() const override { return 0; }

  int responses = 0;
  HttpResponse last;
};

}  // namespace brisk::server::testutil
