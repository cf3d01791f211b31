#include "server/connection_admission.h"

#include "util/check.h"

namespace brisk::server {

ConnectionAdmission::Decision ConnectionAdmission::Admit(uint64_t id, const std::string& client,
                                                         double now_s) {
  BRISK_CHECK(entries_.count(id) == 0);
  Decision d;
  Client& c = clients_[client];
  if (limits_.max_per_client > 0 && c.open >= size_t(limits_.max_per_client)) {
    if (c.idle.empty()) {
      counters_.refused_total++;
      if (c.open == 0) clients_.erase(client);
      d.refusal = "too many connections from " + client + ": " + std::to_string(c.open) +
                  " open, all busy with requests (--max-connections-per-client " +
                  std::to_string(limits_.max_per_client) + ")";
      return d;
    }
    d.evict.push_back(EvictOldest(c.idle));
  }
  if (limits_.max_connections > 0 && counters_.open >= size_t(limits_.max_connections)) {
    if (idle_.empty()) {
      counters_.refused_total++;
      if (c.open == 0) clients_.erase(client);
      d.refusal = "the server is at its connection limit: " + std::to_string(counters_.open) +
                  " connections open, all busy with requests (--max-connections " +
                  std::to_string(limits_.max_connections) + ")";
      return d;
    }
    d.evict.push_back(EvictOldest(idle_));
  }
  d.admit = true;
  Entry& e = entries_[id];
  e.client = client;
  e.state = State::kBusy;  // SetIdle counts idle entries from a non-idle state
  c.open++;
  counters_.open++;
  SetIdle(id, e, now_s);
  return d;
}

void ConnectionAdmission::MarkIdle(uint64_t id, double now_s) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != State::kBusy) return;
  SetIdle(id, it->second, now_s);
}

void ConnectionAdmission::MarkBusy(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != State::kIdle) return;
  ClearIdle(id, it->second);
  it->second.state = State::kBusy;
}

void ConnectionAdmission::CancelEviction(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != State::kEvicting) return;
  it->second.state = State::kBusy;
  clients_[it->second.client].open++;
  counters_.open++;
}

void ConnectionAdmission::Remove(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.state == State::kIdle) ClearIdle(id, e);
  if (e.state != State::kEvicting) Uncount(e);
  auto c = clients_.find(e.client);
  if (c != clients_.end() && c->second.open == 0 && c->second.idle.empty()) clients_.erase(c);
  entries_.erase(it);
}

size_t ConnectionAdmission::open_from(const std::string& client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.open;
}

void ConnectionAdmission::SetIdle(uint64_t id, Entry& e, double now_s) {
  e.state = State::kIdle;
  e.idle_since = now_s;
  idle_.insert({now_s, id});
  clients_[e.client].idle.insert({now_s, id});
}

void ConnectionAdmission::ClearIdle(uint64_t id, Entry& e) {
  idle_.erase({e.idle_since, id});
  clients_[e.client].idle.erase({e.idle_since, id});
}

uint64_t ConnectionAdmission::EvictOldest(const std::set<IdleKey>& idle) {
  const uint64_t id = idle.begin()->second;  // copied: ClearIdle erases the key `idle` holds
  Entry& e = entries_.at(id);
  ClearIdle(id, e);
  Uncount(e);
  e.state = State::kEvicting;
  counters_.evicted_total++;
  return id;
}

void ConnectionAdmission::Uncount(Entry& e) {
  clients_[e.client].open--;
  counters_.open--;
}

}  // namespace brisk::server
