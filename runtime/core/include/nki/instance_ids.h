/** \file The program ids of the instances one core runs, stored flat. */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

namespace nki {

/**
 * A list of program ids of one rank (grid axes), in one flat array: a launch places thousands
 * of instances, and one heap block per id cost more than running them (bench/README.md,
 * "Dispatch"). `id(i)` is the id as a view; `operator[]`, `front`, `back` and iteration give
 * copies, for code that wants a std::vector. Copies share the array until one of them appends
 * (a placement kept for the next launch is copied into every launch's result for free).
 */
class InstanceIds {
 public:
  InstanceIds() = default;
  explicit InstanceIds(std::size_t rank) : rank_(rank) {}

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::size_t rank() const { return rank_; }

  std::span<const std::int64_t> id(std::size_t i) const {
    return {storage_->flat.data() + i * rank_, rank_};
  }

  /**
   * The ids as runs, in order: each run's length, its ids stepping by +1 in the last axis with
   * the others equal (what one compiled call can take: core_run.cpp). Kept as ids are appended, so
   * a placement kept for the next launch is not compared again on every launch.
   */
  std::span<const std::uint32_t> runs() const {
    if (!storage_) return {};
    return storage_->runs;
  }
  std::vector<std::int64_t> operator[](std::size_t i) const {
    const std::span<const std::int64_t> v = id(i);
    return {v.begin(), v.end()};
  }
  std::vector<std::int64_t> front() const { return (*this)[0]; }
  std::vector<std::int64_t> back() const { return (*this)[count_ - 1]; }

  /** Appends an id of this list's rank (the first id of an empty, rank-less list sets it). */
  void push_back(std::span<const std::int64_t> pid) {
    if (count_ == 0 && rank_ == 0) rank_ = pid.size();
    Storage& s = own();
    if (continues_run(s, pid)) ++s.runs.back();
    else s.runs.push_back(1);
    for (const std::int64_t x : pid) s.flat.push_back(x);  // ids are a few ints: no memmove call
    ++count_;
  }
  void reserve(std::size_t n) { own().flat.reserve(n * rank_); }

  /** Every id as a vector of its own. */
  std::vector<std::vector<std::int64_t>> to_vectors() const {
    std::vector<std::vector<std::int64_t>> out;
    out.reserve(count_);
    for (std::size_t i = 0; i < count_; ++i) out.push_back((*this)[i]);
    return out;
  }

  /** Iterates the ids as vectors (copies). */
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = std::vector<std::int64_t>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::vector<std::int64_t>;
    const_iterator(const InstanceIds* ids, std::size_t i) : ids_(ids), i_(i) {}
    reference operator*() const { return (*ids_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const InstanceIds* ids_;
    std::size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, count_}; }

  bool operator==(const InstanceIds& o) const {
    return rank_ == o.rank_ && count_ == o.count_ && (count_ == 0 || storage_->flat == o.storage_->flat);
  }
  friend bool operator==(const InstanceIds& a, const std::vector<std::vector<std::int64_t>>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < b.size(); ++i) {
      const std::span<const std::int64_t> v = a.id(i);
      if (!std::equal(v.begin(), v.end(), b[i].begin(), b[i].end())) return false;
    }
    return true;
  }

 private:
  struct Storage {
    std::vector<std::int64_t> flat;  ///< the ids, rank_ ints each
    std::vector<std::uint32_t> runs;  ///< runs(): at most 4 bytes an id, fewer ids than that
  };
  /** Whether `pid` extends the last run (a run stops short of 2^32 ids). */
  bool continues_run(const Storage& s, std::span<const std::int64_t> pid) const {
    if (count_ == 0 || rank_ == 0 || s.runs.back() == UINT32_MAX) return false;
    const std::int64_t* last = s.flat.data() + (count_ - 1) * rank_;
    for (std::size_t a = 0; a + 1 < rank_; ++a)
      if (pid[a] != last[a]) return false;
    return pid[rank_ - 1] == last[rank_ - 1] + 1;
  }
  /** The storage, this list's alone: copied first when another list shares it. */
  Storage& own() {
    if (!storage_) storage_ = std::make_shared<Storage>();
    else if (storage_.use_count() > 1) storage_ = std::make_shared<Storage>(*storage_);
    return *storage_;
  }
  std::size_t rank_ = 0;
  std::size_t count_ = 0;
  std::shared_ptr<Storage> storage_;
};

}  // namespace nki
