/** \file The persistent worker threads of the baselines. */
#include "persistent_threads.h"

namespace nki_bench {

PersistentThreads::PersistentThreads(int threads) {
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
}

PersistentThreads::~PersistentThreads() {
  stopping_ = true;
  generation_.fetch_add(1);
  generation_.notify_all();
  for (std::thread& w : workers_) w.join();
}

void PersistentThreads::run(const std::function<void(int)>& part) {
  part_ = &part;
  pending_.store(static_cast<int>(workers_.size()));
  generation_.fetch_add(1);  // publishes part_ to the workers (seq_cst)
  generation_.notify_all();
  part(0);
  for (int left = pending_.load(); left != 0; left = pending_.load()) pending_.wait(left);
}

void PersistentThreads::work(int t) {
  std::uint64_t seen = 0;
  for (;;) {
    generation_.wait(seen);
    seen = generation_.load();
    if (stopping_) return;
    (*part_)(t);
    if (pending_.fetch_sub(1) == 1) pending_.notify_one();
  }
}

}  // namespace nki_bench
