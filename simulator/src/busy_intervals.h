/** \file Busy intervals of one resource of a core (a DMA queue, the core's share of HBM): the first gap that fits. */
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>

namespace nki::sim {

/**
 * Disjoint busy intervals [start, end) of one resource. The scheduler places instructions in
 * program order, not time order, so a later instruction may take a gap an earlier one left
 * (as the compiler hoists an independent transfer above one that is ready later). At most
 * kKeep intervals are kept: older ones fold into a floor before which the resource counts as
 * busy (conservative, and what bounds the estimate's memory).
 */
class BusyIntervals {
 public:
  static constexpr std::size_t kKeep = 256;

  /** The earliest t >= earliest such that [t, t + dur) is free. */
  double first_fit(double earliest, double dur) const {
    double t = std::max(earliest, floor_);
    auto it = busy_.upper_bound(t);
    if (it != busy_.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
    while (it != busy_.end() && it->first < t + dur) {
      t = std::max(t, it->second);
      ++it;
    }
    return t;
  }

  /** Marks [start, start + dur) busy; it must be free (first_fit). */
  void reserve(double start, double dur) {
    const double end = start + dur;
    last_end_ = std::max(last_end_, end);
    auto next = busy_.lower_bound(start);
    if (next != busy_.begin() && std::prev(next)->second == start) {  // extend the interval that ends where this starts
      auto prev = std::prev(next);
      prev->second = end;
      if (next != busy_.end() && next->first == end) {  // and join the one that starts where it ends
        prev->second = next->second;
        busy_.erase(next);
      }
    } else if (next != busy_.end() && next->first == end) {
      const double next_end = next->second;
      busy_.erase(next);
      busy_.emplace(start, next_end);
    } else {
      busy_.emplace(start, end);
    }
    while (busy_.size() > kKeep) {
      floor_ = std::max(floor_, busy_.begin()->second);
      busy_.erase(busy_.begin());
    }
  }

  /** The end of the last busy interval (0 while none). */
  double last_end() const { return last_end_; }

 private:
  std::map<double, double> busy_;
  double floor_ = 0, last_end_ = 0;
};

}  // namespace nki::sim
