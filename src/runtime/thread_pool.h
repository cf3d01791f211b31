// A persistent compute pool: the calling thread is worker 0, the others wait on a generation
// counter (spin for a short while, then sleep), so a forward pass of many small parallel ops pays
// microseconds, not thread start-ups, per op.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace brisk {

class ThreadPool {
 public:
  // n_threads <= 0 means one per available core.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(thread_index, n_threads) on every worker (the caller included) and waits for all.
  void Run(const std::function<void(int, int)>& fn);

  // Splits [0, n) into contiguous chunks of at least `grain` items, one range per worker call:
  // fn(begin, end, thread_index). Static partitioning keeps results independent of timing.
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn);

  // The cores of the affinity mask, at most ceil(the cgroup CPU quota) (runtime/cgroup_limits.h).
  static int DefaultThreads();

  // Called by worker `thread` (>= 1) inside a job: once that worker has reported the job done,
  // it prefetches [p, p + bytes) into L2 before waiting for the next job. Decode leaves memory
  // idle between matmuls (the caller runs norms, RoPE, residuals alone); this lets the idle
  // worker pull in the first weights each thread will stream in the next matmul, off the
  // critical path. It stops early when the next job starts. At most kMaxPrefetch ranges per job;
  // the pointers must stay valid.
  static constexpr int kMaxPrefetch = 2;
  void PrefetchAfterJob(int thread, const void* p, size_t bytes);

 private:
  struct PrefetchRange {
    const char* p = nullptr;
    size_t bytes = 0;
  };
  struct alignas(64) WorkerPrefetch {  // one cache line per worker: written only by its owner
    PrefetchRange r[kMaxPrefetch];
    int n = 0;
  };
  void WorkerLoop(int index);

  int n_threads_;
  std::vector<std::thread> workers_;
  std::vector<WorkerPrefetch> prefetch_;
  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable wake_;
};

}  // namespace brisk
