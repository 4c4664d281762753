/** \file One thread per simulated core, the threads parked between launches rather than started per launch. */
#include "core/core_workers.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace nki {

namespace {

/**
 * How long a waiter watches the state before it sleeps on the futex. Waking a sleeping thread
 * costs tens of microseconds on a VM (the other vCPU halts and needs an interrupt); a launch that
 * follows the last within this window, or a core that finishes within it, finds its waiter awake.
 * Bounded, so a busy machine loses at most this much CPU per wait (an unbounded spin starves the
 * thread being waited for when both share a CPU).
 */
constexpr std::chrono::microseconds kSpinBeforeSleep{50};

/** Returns when `state` no longer holds `value`: watched for kSpinBeforeSleep, then slept on. */
void wait_while(const std::atomic<std::uint32_t>& state, std::uint32_t value) {
  const auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (unsigned i = 1;; ++i) {
    if (state.load(std::memory_order_acquire) != value) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
  }
  state.wait(value);
}

/**
 * A thread that runs one body at a time and waits on `state` (wait_while: briefly awake, then a futex)
 * between them. Owned by the park for the life of the process, so the caller that waits for it
 * and the thread itself only ever touch memory that outlives both.
 */
struct ParkedThread {
  enum : std::uint32_t { parked = 0, working = 1 };
  std::atomic<std::uint32_t> state{parked};
  const std::function<void()>* body = nullptr;
  std::thread thread;

  ParkedThread() : thread([this] { serve(); }) {}
  void serve() {
    for (;;) {
      wait_while(state, parked);
      (*body)();
      state.store(parked);
      state.notify_one();
    }
  }
};

/**
 * The threads not running a body. A launch takes one per busy core after the first (starting
 * one when none is idle) and returns it when its body is done: a launch pays a wake-up per core, not a thread
 * start and join. Never destroyed: at exit the parked threads sleep and the process ends them.
 */
class ThreadPark {
 public:
  ParkedThread* take() {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      ParkedThread* t = idle_.back();
      idle_.pop_back();
      return t;
    }
    all_.push_back(std::make_unique<ParkedThread>());
    return all_.back().get();
  }
  void give_back(ParkedThread* t) {
    std::lock_guard lock(mutex_);
    idle_.push_back(t);
  }
  /**
   * In a child of fork(), before anything else runs: it has none of its parent's threads, so
   * they are forgotten (not ours to free), and the lock one of them may have held is made anew.
   * (pthread_atfork, not a getpid() per launch: that is a system call.)
   */
  void forget_after_fork() {
    for (auto& t : all_) (void)t.release();
    all_.clear();
    idle_.clear();
    new (&mutex_) std::mutex;
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<ParkedThread>> all_;
  std::vector<ParkedThread*> idle_;
};

ThreadPark& thread_park() {
  static ThreadPark* park = [] {
    auto* p = new ThreadPark;  // leaked on purpose: see ThreadPark
    ::pthread_atfork(nullptr, nullptr, [] { thread_park().forget_after_fork(); });
    return p;
  }();
  return *park;
}

}  // namespace

void run_on_own_threads(std::size_t n, const std::function<void(std::size_t)>& body) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::function<void()>> bodies;
  bodies.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    bodies.emplace_back([&, i] {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  std::vector<ParkedThread*> threads;
  threads.reserve(n);
  auto wait_for_all = [&] {  // every started body has returned before this does
    for (ParkedThread* t : threads) {
      wait_while(t->state, ParkedThread::working);
      thread_park().give_back(t);
    }
  };
  try {
    for (std::size_t i = 1; i < n; ++i) {
      threads.push_back(thread_park().take());  // may throw: no thread could be started
      threads.back()->body = &bodies[i];
      threads.back()->state.store(ParkedThread::working);  // publishes body (seq_cst)
      threads.back()->state.notify_one();
    }
  } catch (...) {
    wait_for_all();
    throw;
  }
  if (n > 0) bodies[0]();  // the caller is body 0's thread: one wake-up fewer per launch
  wait_for_all();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace nki
