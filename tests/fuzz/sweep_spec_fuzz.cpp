/** \file libFuzzer target: the sweep-spec parser (`nki bench --sweep`) on arbitrary text. */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nki/error.h"
#include "cli/sweep_spec.h"

// Bad text must end in nki::UserError (err_invalid_sweep); a parsed spec has positive values,
// no name or value twice, and prints back to a spelling that parses to the same axes.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<nki::cli::SweepAxis> axes;
  try {
    axes = nki::cli::parse_sweep(text);
  } catch (const nki::UserError& e) {
    if (e.name() != "err_invalid_sweep") std::abort();
    return 0;
  }
  if (axes.empty()) std::abort();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].name.empty() || axes[i].values.empty()) std::abort();
    for (std::size_t j = 0; j < i; ++j)
      if (axes[j].name == axes[i].name) std::abort();
    for (std::size_t a = 0; a < axes[i].values.size(); ++a) {
      if (axes[i].values[a] < 1) std::abort();
      for (std::size_t b = 0; b < a; ++b)
        if (axes[i].values[a] == axes[i].values[b]) std::abort();
    }
  }
  if (nki::cli::parse_sweep(nki::cli::sweep_str(axes)) != axes) std::abort();
  return 0;
}
