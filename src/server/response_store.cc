#include "server/response_store.h"

#include <utility>

#include "util/clock.h"

namespace brisk::server {

ResponseStore::ResponseStore(ResponseStoreLimits limits, Clock clock)
    : limits_(limits), clock_(clock ? std::move(clock) : Clock(NowSeconds)) {}

size_t ResponseStore::SizeOf(const StoredResponse& r) {
  const auto size = [](const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).size();
  };
  return r.id.size() + size(r.response) + size(r.conversation);
}

bool ResponseStore::Put(std::shared_ptr<const StoredResponse> r) {
  const size_t bytes = SizeOf(*r);  // outside the lock: the dump is the costly part
  Dropped dropped;                  // destroyed after the lock is released (declared before it)
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(r->id); it != entries_.end()) Erase(it, &dropped);
  if (limits_.max_responses == 0 || bytes > limits_.max_bytes) return false;
  const double now = clock_();
  DropExpired(now, &dropped);
  while (!lru_.empty() && (entries_.size() + 1 > limits_.max_responses ||
                           stats_.bytes + bytes > limits_.max_bytes)) {
    Erase(entries_.find(lru_.back()), &dropped);
    ++stats_.evicted;
  }
  const std::string id = r->id;
  lru_.push_front(id);
  created_.push_back(id);
  entries_[id] =
      Entry{std::move(r), bytes, now + limits_.ttl_s, lru_.begin(), std::prev(created_.end())};
  stats_.bytes += bytes;
  stats_.responses = entries_.size();
  return true;
}

std::shared_ptr<const StoredResponse> ResponseStore::Get(const std::string& id) {
  Dropped dropped;
  std::lock_guard<std::mutex> lock(mu_);
  DropExpired(clock_(), &dropped);
  auto it = entries_.find(id);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.response;
}

bool ResponseStore::Delete(const std::string& id) {
  Dropped dropped;
  std::lock_guard<std::mutex> lock(mu_);
  DropExpired(clock_(), &dropped);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  Erase(it, &dropped);
  return true;
}

ResponseStore::Stats ResponseStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void ResponseStore::Erase(std::unordered_map<std::string, Entry>::iterator it, Dropped* dropped) {
  dropped->push_back(std::move(it->second.response));
  stats_.bytes -= it->second.bytes;
  lru_.erase(it->second.lru);
  created_.erase(it->second.age);
  entries_.erase(it);
  stats_.responses = entries_.size();
}

void ResponseStore::DropExpired(double now, Dropped* dropped) {
  while (!created_.empty()) {
    auto it = entries_.find(created_.front());
    if (it->second.expires > now) return;
    Erase(it, dropped);
    ++stats_.expired;
  }
}

}  // namespace brisk::server
