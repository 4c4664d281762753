/** \file Cores' batches shared out between threads: every instance once, own core first, the others from their ends. */
#include "shared_batches.h"

#include <mutex>
#include <thread>

#include "nki/error.h"
#include "test_support.h"

namespace {

using Batch = std::pair<std::vector<std::int64_t>, std::int64_t>;  // first id, count

/** Records the batches it runs; throws an InternalError for the batch starting at `fail_at`. */
class RecordingRunner : public nki::CoreRunner {
 public:
  std::vector<Batch> ran;
  std::vector<std::int64_t> fail_at;
  void run_batch(std::span<const std::int64_t> pid, std::int64_t count) override {
    std::vector<std::int64_t> first(pid.begin(), pid.end());
    if (first == fail_at) throw nki::InternalError("a step failed");
    ran.emplace_back(std::move(first), count);
  }
};

/** Rows r of a [rows, cols] grid with r % 2 == core, in order: the placement of spmd_dim(rows / 2, nc(2)). */
nki::InstanceIds alternate_rows(std::int64_t rows, std::int64_t cols, std::int64_t core) {
  nki::InstanceIds ids(2);
  for (std::int64_t r = core; r < rows; r += 2)
    for (std::int64_t c = 0; c < cols; ++c) ids.push_back(std::vector<std::int64_t>{r, c});
  return ids;
}

}  // namespace

TEST_CASE("SharedBatches: a thread alone runs its core's batches from the front, then the other core's from its back") {
  const nki::InstanceIds nc0 = alternate_rows(4, 100, 0), nc1 = alternate_rows(4, 100, 1);
  const std::vector<nki::SharedCore> cores{{&nc0, {"NC", 0}}, {&nc1, {"NC", 1}}};
  nki::SharedBatches batches(cores);
  std::atomic<bool> stop{false};
  RecordingRunner first, second;
  CHECK(batches.run(0, "k", first, stop));
  // Runs of 100 ids are cut as run_core_instances cuts them: 64, then 36.
  CHECK(first.ran == std::vector<Batch>{{{0, 0}, 64}, {{0, 64}, 36}, {{2, 0}, 64}, {{2, 64}, 36},
                                        {{3, 64}, 36}, {{3, 0}, 64}, {{1, 64}, 36}, {{1, 0}, 64}});
  CHECK(batches.run(1, "k", second, stop));  // nothing left for the thread that came late
  CHECK(second.ran.empty());
  CHECK_FALSE(stop.load());
}

TEST_CASE("SharedBatches: two threads at once run every instance exactly once, each its own core's first in order") {
  const std::int64_t rows = 64, cols = 40;  // one batch per row
  const nki::InstanceIds nc0 = alternate_rows(rows, cols, 0), nc1 = alternate_rows(rows, cols, 1);
  const std::vector<nki::SharedCore> cores{{&nc0, {"NC", 0}}, {&nc1, {"NC", 1}}};
  for (int round = 0; round < 20; ++round) {
    nki::SharedBatches batches(cores);
    std::atomic<bool> stop{false};
    RecordingRunner runners[2];
    std::thread other([&] { CHECK(batches.run(1, "k", runners[1], stop)); });
    CHECK(batches.run(0, "k", runners[0], stop));
    other.join();
    std::vector<int> times(static_cast<std::size_t>(rows), 0);
    for (int t = 0; t < 2; ++t) {
      std::int64_t next_own = t;  // a thread's own core's rows come first, in order
      bool own_part = true;
      for (const auto& [first, count] : runners[t].ran) {
        CHECK(count == cols);
        CHECK(first[1] == 0);
        ++times[static_cast<std::size_t>(first[0])];
        if (own_part && first[0] % 2 == t) {
          CHECK(first[0] == next_own);
          next_own += 2;
        } else {
          own_part = false;
          CHECK(first[0] % 2 != t);  // once taking the other core's, never its own again
        }
      }
    }
    CHECK(times == std::vector<int>(static_cast<std::size_t>(rows), 1));
  }
}

TEST_CASE("SharedBatches: a failure in another core's batch names that core and stops every thread") {
  const nki::InstanceIds nc0 = alternate_rows(4, 10, 0), nc1 = alternate_rows(4, 10, 1);
  const std::vector<nki::SharedCore> cores{{&nc0, {"NC", 0}}, {&nc1, {"NC", 1}}};
  nki::SharedBatches batches(cores);
  std::atomic<bool> stop{false};
  RecordingRunner runner;
  runner.fail_at = {1, 0};  // NC1's first batch, which NC0's thread reaches last
  CHECK_THROWS_WITH_AS(batches.run(0, "k", runner, stop), "internal error: NC1 instances [1,0]..[1,9]: a step failed",
                       nki::InternalError);
  CHECK(runner.ran == std::vector<Batch>{{{0, 0}, 10}, {{2, 0}, 10}, {{3, 0}, 10}});
  CHECK(stop.load());
  RecordingRunner late;
  CHECK_FALSE(batches.run(1, "k", late, stop));  // stopped: runs nothing more, and says so
  CHECK(late.ran.empty());
}
