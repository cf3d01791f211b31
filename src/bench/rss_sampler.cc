#include "bench/rss_sampler.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

namespace brisk {

Result<double> ReadRssMib(int pid) {
  const std::string who = pid > 0 ? std::to_string(pid) : "self";
  std::ifstream f("/proc/" + who + "/status");
  if (!f) return Status::Error("process " + who + ": no such process");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream in(line.substr(6));
    double kib = 0;
    if (in >> kib) return kib / 1024.0;
  }
  return Status::Error("process " + who + ": no VmRSS (a kernel thread?)");
}

RssSampler::RssSampler(int pid, double period_s) : pid_(pid) {
  Sample();
  thread_ = std::thread([this, period_s] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::duration<double>(period_s), [&] { return stop_; })) {
      lock.unlock();
      Sample();
      lock.lock();
    }
  });
}

RssSampler::~RssSampler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

double RssSampler::Sample() {
  auto r = ReadRssMib(pid_);
  const double v = r.ok() ? *r : 0;
  std::lock_guard<std::mutex> lock(mu_);
  max_ = std::max(max_, v);
  return v;
}

double RssSampler::max() {
  std::lock_guard<std::mutex> lock(mu_);
  return max_;
}

void RssSampler::ResetMax() {
  auto r = ReadRssMib(pid_);
  std::lock_guard<std::mutex> lock(mu_);
  max_ = r.ok() ? *r : 0;
}

}  // namespace brisk
