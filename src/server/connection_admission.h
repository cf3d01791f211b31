// Which connections `brisk serve` keeps when clients open more than it allows (DESIGN §6
// "Limits"). Plain bookkeeping, no sockets: the transport (http_server.cc) asks Admit() for each
// accepted connection and reports each connection's state changes; this decides.
//
// Policy, in the order it is applied to a new connection from client address A:
//   1. A already holds max_per_client connections: A's longest-idle connection is evicted to make
//      room, or, when all of A's connections are busy with requests, the new one is refused.
//   2. The server holds max_connections: the longest-idle connection of any client is evicted, or,
//      when every connection is busy, the new one is refused.
// "Idle" means waiting for a request's header: a fresh connection that has not finished sending
// one (a slowloris client) or a keep-alive connection between requests. A connection whose request
// is being read or answered is never evicted. Idle time counts from when the connection started
// waiting (its accept, or the end of its previous response), not from its last byte, so a client
// trickling header bytes cannot make its connections look fresh. A client holding every slot with
// half-sent headers therefore loses its oldest one each time anybody connects, and legitimate
// requests, which send their header at once, get through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace brisk::server {

struct AdmissionLimits {
  int max_connections = 0;  // <= 0: no limit
  int max_per_client = 0;   // per client address; <= 0: no limit
};

struct AdmissionCounters {
  size_t open = 0;             // admitted connections not yet removed or evicted
  uint64_t refused_total = 0;  // connections turned away (every slot busy)
  uint64_t evicted_total = 0;  // idle connections closed to make room
};

class ConnectionAdmission {
 public:
  explicit ConnectionAdmission(AdmissionLimits limits) : limits_(limits) {}

  struct Decision {
    bool admit = false;
    std::vector<uint64_t> evict;  // admitted: close these idle connections (EvictionDone after)
    std::string refusal;          // not admitted: why, for the 503 the client gets
  };
  // A new connection `id` (unique, never reused) from `client` (its address without the port) at
  // time `now_s`. Admitted connections start idle.
  Decision Admit(uint64_t id, const std::string& client, double now_s);

  // The connection started waiting for a request header / finished receiving one.
  void MarkIdle(uint64_t id, double now_s);
  void MarkBusy(uint64_t id);
  // An eviction Admit() asked for found the connection busy after all (its header completed in
  // the meantime): it counts again, above the limit until it closes.
  void CancelEviction(uint64_t id);
  // The connection closed (evicted or not). Unknown ids are ignored.
  void Remove(uint64_t id);

  AdmissionCounters counters() const { return counters_; }
  size_t open_from(const std::string& client) const;

 private:
  enum class State { kIdle, kBusy, kEvicting };
  struct Entry {
    std::string client;
    State state = State::kIdle;
    double idle_since = 0;
  };
  using IdleKey = std::pair<double, uint64_t>;  // (idle since, id): oldest first
  struct Client {
    size_t open = 0;  // admitted, not evicting
    std::set<IdleKey> idle;
  };

  void SetIdle(uint64_t id, Entry& e, double now_s);
  void ClearIdle(uint64_t id, Entry& e);
  // Marks the oldest key of `idle` as evicting and returns its id.
  uint64_t EvictOldest(const std::set<IdleKey>& idle);
  void Uncount(Entry& e);

  const AdmissionLimits limits_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::unordered_map<std::string, Client> clients_;
  std::set<IdleKey> idle_;  // every client's idle connections
  AdmissionCounters counters_;
};

}  // namespace brisk::server
