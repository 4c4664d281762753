/**
 * \file Fuzz target: the cache-entry loader's plan (plan.json of an entry, runtime/compile/src/kernel_plan.cpp).
 * Any bytes either parse to a plan or throw std::runtime_error; a parsed plan prints to JSON
 * that parses back to a plan printing the same.
 */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../../runtime/compile/src/kernel_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nki::KernelPlan plan;
  try {
    plan = nki::plan_from_json(text);
  } catch (const std::runtime_error&) {
    return 0;  // refused: the loader reports the entry damaged and rebuilds it
  }
  const std::string once = nki::plan_to_json(plan);
  const std::string twice = nki::plan_to_json(nki::plan_from_json(once));
  if (once != twice) std::abort();
  return 0;
}
