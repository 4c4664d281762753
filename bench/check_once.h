/** \file A benchmark's result check, run once per process however often Google Benchmark calls the benchmark. */
#pragma once

#include <functional>
#include <map>
#include <string>

namespace nki_bench {

/**
 * Runs `check` the first time `name` is asked for and returns its message (empty: correct);
 * later calls return the kept message. Google Benchmark calls a benchmark function several
 * times (iteration estimation, repetitions); the result is checked once.
 */
inline const std::string& check_once(const std::string& name, const std::function<std::string()>& check) {
  static std::map<std::string, std::string> done;
  auto it = done.find(name);
  if (it == done.end()) it = done.emplace(name, check()).first;
  return it->second;
}

}  // namespace nki_bench
