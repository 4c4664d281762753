/** \file The program ids of the instances one core runs, stored flat. */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

namespace nki {

/**
 * A list of program ids of one rank (grid axes), in one flat array: a launch places thousands
 * of instances, and one heap block per id cost more than running them (bench/README.md,
 * "Dispatch"). `id(i)` is the id as a view; `operator[]`, `front`, `back` and iteration give
 * copies, for code that wants a std::vector.
 */
class InstanceIds {
 public:
  InstanceIds() = default;
  explicit InstanceIds(std::size_t rank) : rank_(rank) {}

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::size_t rank() const { return rank_; }

  std::span<const std::int64_t> id(std::size_t i) const {
    return {flat_.data() + i * rank_, rank_};
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
    for (const std::int64_t x : pid) flat_.push_back(x);  // ids are a few ints: no memmove call
    ++count_;
  }
  void reserve(std::size_t n) { flat_.reserve(n * rank_); }

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

  bool operator==(const InstanceIds& o) const = default;
  friend bool operator==(const InstanceIds& a, const std::vector<std::vector<std::int64_t>>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < b.size(); ++i) {
      const std::span<const std::int64_t> v = a.id(i);
      if (!std::equal(v.begin(), v.end(), b[i].begin(), b[i].end())) return false;
    }
    return true;
  }

 private:
  std::size_t rank_ = 0;
  std::size_t count_ = 0;
  std::vector<std::int64_t> flat_;
};

}  // namespace nki
