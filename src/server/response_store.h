// The in-memory store behind the Responses API's `previous_response_id` and GET / DELETE
// /v1/responses/{id} (docs/responses-api.md): each response created with `store: true` is kept
// with the conversation that led to it, so a later request can continue it by id without
// resending the history. Bounded three ways, with one set of limits (ResponseStoreLimits, which
// `brisk serve` flags set): a count, a byte budget and a time to live. Past the count or the
// bytes the least recently used responses go first; past its TTL (from creation) a response is
// gone whether used or not. Nothing survives a restart: this is a cache for agent loops, not a
// database.
//
// Thread-safe: the engine thread puts a response when it finishes, HTTP threads get and delete.
// Entries are immutable and shared, so the lock is held for a map operation, never for a copy or
// the freeing of a large conversation (dropped entries are released after the lock): the engine
// thread never waits long on an HTTP thread.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/param_range.h"

namespace brisk::server {

struct ResponseStoreLimits {
  size_t max_responses = 1000;  // 0: nothing is stored
  size_t max_bytes = size_t(64) << 20;
  double ttl_s = 3600;  // from creation
};

// What the flags accept (`brisk serve --responses-max`, `--responses-max-mib`,
// `--responses-ttl`): the one place these limits are ranged.
inline constexpr ParamRange kResponsesMaxRange = IntRange(0, 1000000);
inline constexpr ParamRange kResponsesMaxMibRange = {0, 65536};
inline constexpr ParamRange kResponsesTtlRange = {1, 30 * 24 * 3600.0};

struct StoredResponse {
  std::string id;
  // The response object, as POST answered it (GET /v1/responses/{id} returns it).
  nlohmann::ordered_json response;
  // The chat messages a continuation starts from: the previous responses' conversation, this
  // request's input and this response's output as an assistant message. The request's
  // `instructions` are not part of it (OpenAI does not carry them over either).
  nlohmann::ordered_json conversation;
};

class ResponseStore {
 public:
  using Clock = std::function<double()>;  // seconds; only differences matter
  explicit ResponseStore(ResponseStoreLimits limits, Clock clock = {});

  // Keeps `r` (replacing one with its id), evicting as needed; false when it cannot be kept at
  // all (the store holds nothing, or `r` alone is over the byte budget).
  bool Put(std::shared_ptr<const StoredResponse> r);
  // nullptr when never stored, deleted, evicted or expired. A hit makes it the most recently used.
  std::shared_ptr<const StoredResponse> Get(const std::string& id);
  // False when there was nothing (live) to delete.
  bool Delete(const std::string& id);

  struct Stats {
    size_t responses = 0, bytes = 0, evicted = 0, expired = 0;
  };
  Stats stats() const;
  const ResponseStoreLimits& limits() const { return limits_; }

  // The bytes a response is counted as: its JSON texts and id.
  static size_t SizeOf(const StoredResponse& r);

 private:
  using Lru = std::list<std::string>;  // ids, most recently used first
  struct Entry {
    std::shared_ptr<const StoredResponse> response;
    size_t bytes = 0;
    double expires = 0;
    Lru::iterator lru;
    std::list<std::string>::iterator age;  // in created_, oldest first
  };

  using Dropped = std::vector<std::shared_ptr<const StoredResponse>>;  // freed after unlocking
  // mu_ held.
  void Erase(std::unordered_map<std::string, Entry>::iterator it, Dropped* dropped);
  void DropExpired(double now, Dropped* dropped);

  const ResponseStoreLimits limits_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  Lru lru_;
  // Ids in creation order: with one TTL for all, the oldest expires first, so expiry pops from
  // the front instead of scanning.
  std::list<std::string> created_;
  Stats stats_;
};

}  // namespace brisk::server
