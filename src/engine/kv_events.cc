#include "engine/kv_events.h"

#include <chrono>

namespace brisk {

bool KvEventQueue::TryPush(KvEventBatch batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || batches_.size() >= capacity_) {
      ++dropped_;
      return false;
    }
    batches_.push_back(std::move(batch));
  }
  ready_.notify_one();
  return true;
}

std::optional<KvEventBatch> KvEventQueue::Pop(double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                  [&] { return closed_ || !batches_.empty(); });
  if (batches_.empty()) return std::nullopt;
  KvEventBatch b = std::move(batches_.front());
  batches_.pop_front();
  return b;
}

void KvEventQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  ready_.notify_all();
}

int64_t KvEventQueue::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace brisk
