/** \file libFuzzer target: the grid-spec parser (`--grid`) on arbitrary text. */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nki/error.h"
#include "nki/grid.h"

// Bad text must end in nki::UserError (err_invalid_grid); a parsed grid prints back to a
// spelling that parses to the same grid, and its sizes are computable.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nki::GridSpec g;
  try {
    g = nki::parse_grid(text);
  } catch (const nki::UserError&) {
    return 0;
  }
  if (nki::parse_grid(g.str()) != g) std::abort();
  if (g.instances() < 1 || g.nc_cores() < 1 || g.logical_shape().size() != g.axes.size()) std::abort();
  return 0;
}
