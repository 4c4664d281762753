/** \file The shared state of one checked launch: who wrote each HBM element, and the poison fresh memory holds. */
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * One execution of a store into HBM (or a load of a tensor nl.atomic_rmw updates): which
 * instance, at which loop values, by which op; and on which core (a runner of the launch),
 * after how many of its core_barriers and sendrecvs.
 */
struct WriteRecord {
  std::vector<std::int64_t> pid, loop;
  std::size_t op = 0;
  bool accumulate = false;
  bool atomic = false;  ///< nl.atomic_rmw: commutes with other atomic updates of the element, by any instance
  int core = 0;
  std::int64_t core_syncs = 0;
};

/** Writer of an element: a record index, or one of these. */
inline constexpr std::int64_t kNeverWritten = -1, kFilled = -2;

/**
 * Records are appended under a lock and read without one: they live in fixed chunks that
 * never move, and a reader only reaches a record through an element's writer index, which
 * the appending thread published after writing it.
 */
class WriteRecords {
 public:
  std::int64_t append(WriteRecord r) {
    std::lock_guard lock(mu_);
    const std::int64_t i = size_++;
    const std::size_t chunk = static_cast<std::size_t>(i) / kChunk;
    if (chunk >= chunks_.size()) throw std::length_error("checked mode: too many stores to record");
    if (!chunks_[chunk]) chunks_[chunk] = std::make_unique<WriteRecord[]>(kChunk);
    chunks_[chunk][static_cast<std::size_t>(i) % kChunk] = std::move(r);
    return i;
  }
  const WriteRecord& operator[](std::int64_t i) const {
    return chunks_[static_cast<std::size_t>(i) / kChunk][static_cast<std::size_t>(i) % kChunk];
  }

 private:
  static constexpr std::size_t kChunk = 4096;
  std::mutex mu_;
  std::int64_t size_ = 0;
  std::vector<std::unique_ptr<WriteRecord[]>> chunks_ = std::vector<std::unique_ptr<WriteRecord[]>>(1 << 16);
};

/** Per HBM tensor that instances share (arguments and shared_hbm ndarrays): the writer of each element. */
struct CheckedLaunch {
  WriteRecords records;
  std::atomic<int> cores{0};  ///< runners bound so far: each is a core of the launch
  std::vector<std::unique_ptr<std::atomic<std::int64_t>[]>> writers;  ///< by tensor id; null when not tracked
  /// by tensor id, for tracked tensors that a load reads: the first record that read each element
  /// (kNeverWritten: none), and the first that read it in another instance than that one. A write
  /// by an instance differing from either is a race, whichever instance the two readers are.
  std::vector<std::unique_ptr<std::atomic<std::int64_t>[]>> readers, other_readers;
};

/** Fills `count` elements with the poison of `dt`: NaN for floats, bytes 0xA5 for integers and bool. */
void poison(std::byte* data, DType dt, std::int64_t count);

}  // namespace nki
