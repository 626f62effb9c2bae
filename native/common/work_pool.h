#pragma once
// The thread pool and first-failure core of the clone engines (linux/clone_tree.cc and
// darwin/clone_engine.cc): a queue of tasks taken newest first, a count of tasks outstanding,
// and one stop, set by the first failure or by the caller's cancel flag, that every thread
// heeds. An engine derives from WorkPool<Task, Failure> and runs a pass with RunTasks.
//
// Failure is the engine's {err, syscall, path} (ErrnoFailure, DarwinCloneFailure). This header
// brings in no Node-API, so that the macOS engine, which includes it, still compiles and runs
// on Linux against a stand-in clonefile (test/native/darwin-clone.test.ts).
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace arb {

template <typename Task, typename Failure>
class WorkPool {
 public:
  const Failure& failure() const { return failure_; }

 protected:
  // cancel: non-zero asks every thread to stop (ECANCELED); null for no such flag.
  explicit WorkPool(const int32_t* cancel) : cancel_(cancel) {}

  // Runs the queued tasks on `threads` new threads, each task through handle(task), until none
  // is outstanding or a failure stops them all. Meanwhile, every `every`, calls tick (if set) on
  // this thread, without the lock. Returns false if anything failed (failure() says what).
  // handle must finish all of a task's work, and drop what it holds open, before it returns:
  // the pass counts as done once the last task's handle has returned.
  template <typename Handle>
  bool RunTasks(unsigned threads, std::chrono::milliseconds every, Handle handle, const std::function<void()>& tick) {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    try {
      for (unsigned i = 0; i < threads; i++) pool.emplace_back([this, &handle] { Worker(handle); });
    } catch (const std::system_error& e) {
      Fail(e.code().value() != 0 ? e.code().value() : EAGAIN, "pthread_create", "");
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (outstanding_ != 0 && !stop_) {
        done_cv_.wait_for(lock, every);
        if (outstanding_ != 0 && !stop_ && tick) {
          lock.unlock();
          tick();
          lock.lock();
        }
      }
    }
    for (std::thread& t : pool) t.join();
    if (!failed_ && pool.empty()) Fail(EAGAIN, "pthread_create", "");
    return !failed_;
  }

  void Push(Task task) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    outstanding_++;
    cv_.notify_one();
  }

  // True once the pass is to stop; the first to see the cancel flag set records ECANCELED.
  bool Stopped() {
    if (stop_flag_.load(std::memory_order_relaxed)) return true;
    if (cancel_ && __atomic_load_n(cancel_, __ATOMIC_RELAXED) != 0) {
      Fail(ECANCELED, "cancel", "");
      return true;
    }
    return false;
  }

  // Fail({errno, "open", Under(root, rel)}): a braced list is evaluated left to right, so errno
  // is read before the path's string is built (an allocation that may change errno).
  struct At {
    int err;
    const char* syscall_name;
    std::string path;
  };
  bool Fail(const At& at) { return Fail(at.err, at.syscall_name, at.path); }

  // Records the first failure and stops every thread. Returns false, for `return Fail(…)`.
  bool Fail(int err, const char* syscall_name, const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_) {
      failed_ = true;
      failure_ = Failure{err, syscall_name, path};
    }
    stop_ = true;
    stop_flag_.store(true, std::memory_order_relaxed);
    cv_.notify_all();
    done_cv_.notify_all();
    return false;
  }

 private:
  template <typename Handle>
  void Worker(Handle& handle) {
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty() || outstanding_ == 0; });
        if (stop_ || queue_.empty()) return;
        // Newest first: depth first, so the queue (and what it holds open) stays short.
        task = std::move(queue_.back());
        queue_.pop_back();
      }
      handle(task);
      task = Task();  // whatever handle left in it is closed before the task counts as done
      std::lock_guard<std::mutex> lock(mu_);
      if (--outstanding_ == 0) {
        cv_.notify_all();
        done_cv_.notify_all();
      }
    }
  }

  const int32_t* cancel_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<Task> queue_;
  size_t outstanding_ = 0;
  bool stop_ = false;
  std::atomic<bool> stop_flag_{false};
  bool failed_ = false;
  Failure failure_;
};

}  // namespace arb
