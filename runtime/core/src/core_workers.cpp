/** \file One thread per simulated core. */
#include "core/core_workers.h"

#include <exception>
#include <thread>
#include <vector>

namespace nki {

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
