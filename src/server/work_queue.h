// A few threads for request work too heavy for the HTTP I/O threads: tokenizing a body of
// megabytes takes about a second, and on an I/O thread it would hold up every connection that
// thread serves (GET /health included). Tasks run in the order posted.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace brisk::server {

class WorkQueue {
 public:
  explicit WorkQueue(int threads);
  ~WorkQueue();  // Stop()
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `task`; false (and the task is destroyed unrun) once Stop() was called.
  bool Post(std::function<void()> task);
  // Lets running tasks finish, drops queued ones, joins the threads. Idempotent.
  void Stop();
  size_t queued() const;

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace brisk::server
