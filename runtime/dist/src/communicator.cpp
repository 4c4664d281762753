/** \file The process's communicator, and agreeing on a step's outcome across ranks. */
#include "nki/communicator.h"

#include <fmt/format.h>

#include <mutex>

#include "in_process_communicator.h"
#include "nki/error.h"

namespace nki {

namespace {
std::mutex current_mutex;
std::shared_ptr<Communicator>& current() {
  static std::shared_ptr<Communicator> c = std::make_shared<InProcessCommunicator>();
  return c;
}
}  // namespace

std::shared_ptr<Communicator> make_in_process_communicator() { return std::make_shared<InProcessCommunicator>(); }

Communicator& communicator() {
  std::lock_guard lock(current_mutex);
  return *current();
}

void set_communicator(std::shared_ptr<Communicator> c) {
  std::lock_guard lock(current_mutex);
  current() = c ? std::move(c) : std::make_shared<InProcessCommunicator>();
}

void on_every_rank(Communicator& c, const std::function<void()>& step) {
  std::exception_ptr failure;
  std::string message;
  try {
    step();
  } catch (const std::exception& e) {
    failure = std::current_exception();
    message = e.what();
    if (message.empty()) message = "failed";
  }
  if (c.ranks() == 1) {
    if (failure) std::rethrow_exception(failure);
    return;
  }
  const std::vector<std::string> outcomes = c.all_gather_text(message);
  if (failure) std::rethrow_exception(failure);
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    if (!outcomes[r].empty()) {
      throw UserError("err_rank_failed", "", {}, fmt::format("rank {} of {} failed: {}", r, outcomes.size(), outcomes[r]));
    }
  }
}

}  // namespace nki
