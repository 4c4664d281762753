/** \file One TBB worker per simulated core: one-slot task arenas, and TBB's thread cap. */
#include "core/core_workers.h"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nki {

namespace {

/**
 * Lets TBB run `workers` worker threads at once. TBB's default cap is the CPU count,
 * callers included; simulated cores may outnumber CPUs. The cap is raised (never lowered)
 * only when needed, since the smallest of all live limits wins and a host application may
 * have set its own.
 */
void allow_workers(int workers) {
  static std::mutex mu;
  static std::unique_ptr<tbb::global_control> control;
  static int allowed = static_cast<int>(std::thread::hardware_concurrency());
  std::lock_guard lock(mu);
  const int want = workers + 1;  // the limit counts the waiting caller too
  if (want > allowed) {
    control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, want);
    allowed = want;
  }
}

}  // namespace

void run_on_own_workers(std::size_t n, const std::function<void(std::size_t)>& body) {
  allow_workers(static_cast<int>(n));
  std::vector<std::unique_ptr<tbb::task_arena>> arenas;
  std::vector<std::exception_ptr> errors(n);
  std::latch done(static_cast<std::ptrdiff_t>(n));
  // Everything written before the enqueues (the body and what it refers to) is published
  // with a release store each worker acquires first. TBB's hand-off orders the same
  // writes, but inside libtbb, which ThreadSanitizer does not see (tests/tsan.supp).
  std::atomic<bool> published{false};
  published.store(true, std::memory_order_release);
  for (std::size_t i = 0; i < n; ++i) {
    arenas.push_back(std::make_unique<tbb::task_arena>(1, 0));
    arenas.back()->enqueue([&, i] {
      (void)published.load(std::memory_order_acquire);
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      done.count_down();
    });
  }
  done.wait();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void run_on_own_threads(std::size_t n, const std::function<void(std::size_t)>& body) {
  std::vector<std::exception_ptr> errors(n);
  {
    std::vector<std::jthread> threads;
    threads.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        try {
          body(i);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
  }  // every thread joined
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace nki
