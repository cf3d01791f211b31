// The Engine's hand-offs that are not requests (engine.h): tasks other threads post to run between
// two steps (the block manager belongs to the engine thread), and the step's KV-cache events on
// their way to a publisher.
#include <future>

#include "engine/engine.h"
#include "util/clock.h"

namespace brisk {

void Engine::RunOnEngineThread(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_all();
}

void Engine::RunTasks() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks.swap(tasks_);
  }
  for (auto& t : tasks) t();
}

void Engine::ResetPrefixCache() {
  RunOnEngineThread([this] { blocks_.ResetPrefixCache(); });
}

// Never call it on the engine thread (from a sink): it waits for that thread.
std::vector<uint64_t> Engine::CachedBlockHashes() {
  std::promise<std::vector<uint64_t>> answer;
  std::future<std::vector<uint64_t>> f = answer.get_future();
  RunOnEngineThread([&] { answer.set_value(blocks_.CachedBlockHashes()); });
  return f.get();
}

void Engine::FlushKvEvents() {
  if (!kv_events_) return;
  std::vector<KvCacheEvent> events = blocks_.TakeEvents();
  if (events.empty()) return;
  KvEventBatch batch;
  batch.timestamp = WallSeconds();
  batch.events = std::move(events);
  kv_events_->TryPush(std::move(batch));  // never waits: a full queue drops (and counts) it
}

}  // namespace brisk
