/** \file Worker threads started once and reused by every run: a baseline that pays no thread start per iteration. */
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace nki_bench {

/**
 * `threads` - 1 workers, started by the constructor and joined by the destructor; `run(part)`
 * calls part(t) for every t in [0, threads) at once, part(0) on the caller, and returns when all
 * have. Workers sleep on a futex between runs (std::atomic::wait), so a loaded machine gets the
 * CPU back, as the runtime's cores do.
 */
class PersistentThreads {
 public:
  explicit PersistentThreads(int threads);
  ~PersistentThreads();
  PersistentThreads(const PersistentThreads&) = delete;
  PersistentThreads& operator=(const PersistentThreads&) = delete;

  void run(const std::function<void(int)>& part);
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

 private:
  void work(int t);

  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> generation_{0};  // bumped per run (and once to stop)
  std::atomic<int> pending_{0};               // workers still running this run's part
  const std::function<void(int)>* part_ = nullptr;
  bool stopping_ = false;
};

}  // namespace nki_bench
