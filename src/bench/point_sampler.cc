#include "bench/point_sampler.h"

#include <chrono>
#include <utility>

namespace brisk {

PeriodicThread::PeriodicThread(double period_s, std::function<void()> tick) {
  thread_ = std::thread([this, period_s, tick = std::move(tick)] {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait_for(lock, std::chrono::duration<double>(period_s), [&] { return stop_ || wake_; });
      if (stop_) return;
      wake_ = false;
      lock.unlock();
      tick();
      lock.lock();
    }
  });
}

PeriodicThread::~PeriodicThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void PeriodicThread::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

}  // namespace brisk
