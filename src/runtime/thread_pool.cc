#include "runtime/thread_pool.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/cgroup_limits.h"
#include "util/check.h"

namespace brisk {
namespace {
constexpr int kSpinIterations = 20000;  // ~tens of microseconds before falling back to sleep

inline void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}
}  // namespace

int ThreadPool::DefaultThreads() {
  // The cores this process may run on (a cpuset narrows the mask), then the container's CPU quota:
  // more threads than the quota only get throttled in turn.
  cpu_set_t set;
  const int cores = sched_getaffinity(0, sizeof set, &set) == 0
                        ? CPU_COUNT(&set)
                        : int(std::thread::hardware_concurrency());
  return ThreadsWithin(cores, ProcessCgroupLimits());
}

ThreadPool::ThreadPool(int n_threads) {
  n_threads_ = n_threads > 0 ? n_threads : DefaultThreads();
  prefetch_.resize(size_t(n_threads_));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < kSpinIterations; ++spin) {
      CpuRelax();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load()) return;
    (*job_)(index, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
    // The next job's weights while the calling thread runs the serial code between jobs, but
    // never past the start of that job: a full queue of misses blocks each further prefetch, and
    // 128 KiB of them outlast the gap.
    WorkerPrefetch& pf = prefetch_[size_t(index)];
    auto next_job = [&] { return generation_.load(std::memory_order_relaxed) != seen; };
    for (int i = 0; i < pf.n && !next_job(); ++i)
      for (size_t off = 0; off < pf.r[i].bytes; off += 64) {
        __builtin_prefetch(pf.r[i].p + off, 0, 2);  // read, into L2 (prefetcht1)
        if (off % 1024 == 0 && next_job()) break;
      }
    pf.n = 0;
  }
}

void ThreadPool::PrefetchAfterJob(int thread, const void* p, size_t bytes) {
  if (thread <= 0 || thread >= n_threads_ || !p || bytes == 0) return;
  WorkerPrefetch& pf = prefetch_[size_t(thread)];
  if (pf.n < kMaxPrefetch) pf.r[pf.n++] = {static_cast<const char*>(p), bytes};
}

void ThreadPool::Run(const std::function<void(int, int)>& fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  pending_.store(n_threads_ - 1, std::memory_order_release);
  {
    // Taking the lock orders the generation bump with sleepers' predicate checks.
    std::lock_guard<std::mutex> lock(mu_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  fn(0, n_threads_);
  while (pending_.load(std::memory_order_acquire) != 0) CpuRelax();
  job_ = nullptr;
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(n_threads_, (n + grain - 1) / grain);
  if (chunks <= 1) {
    fn(0, n, 0);
    return;
  }
  Run([&](int t, int) {
    if (t >= chunks) return;
    int64_t begin = n * t / chunks, end = n * (t + 1) / chunks;
    if (begin < end) fn(begin, end, t);
  });
}

}  // namespace brisk
