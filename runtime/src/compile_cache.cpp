/** \file In-process memo of compiled Halide programs, keyed by canonical IR text: SPMD compiles once. */
#include <atomic>
#include <future>
#include <map>
#include <mutex>

#include "nki/ir/passes.h"
#include "nki/kernel.h"
#include "program.h"

namespace nki {

namespace {
std::atomic<std::int64_t> compiles{0};
std::mutex memo_mutex;
/// Keyed by the full canonical text, so two kernels can never share an entry by a hash collision.
std::map<std::string, std::shared_future<std::shared_ptr<const Program>>> memo;
}  // namespace

std::shared_ptr<const Program> halide_program_for(const std::shared_ptr<const ir::KernelIR>& ir,
                                                  const std::string& text, bool& compiled) {
  std::promise<std::shared_ptr<const Program>> promise;
  std::shared_future<std::shared_ptr<const Program>> future;
  {
    std::lock_guard lock(memo_mutex);
    auto it = memo.find(text);
    if (it != memo.end()) {
      future = it->second;
      compiled = false;
    } else {
      future = promise.get_future().share();
      memo.emplace(text, future);
      compiled = true;
    }
  }
  if (compiled) {
    try {
      promise.set_value(compile_halide_program(ir));
      compiles.fetch_add(1);
    } catch (...) {
      {
        std::lock_guard lock(memo_mutex);
        memo.erase(text);  // a failed compile is not remembered; the next launch retries
      }
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

std::int64_t compile_count() { return compiles.load(); }

}  // namespace nki
