/** \file libFuzzer target: the partition-spec parser (`--spec`) on arbitrary text. */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nki/error.h"
#include "nki/mesh.h"
#include "nki/partition_spec.h"

// Bad text must end in nki::UserError; a parsed spec prints as Python's repr, which parses
// back to the same spec, and resolving it against a mesh either succeeds or is a UserError.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nki::PartitionSpec spec;
  try {
    spec = nki::PartitionSpec::parse(text);
  } catch (const nki::UserError&) {
    return 0;
  }
  if (nki::PartitionSpec::parse(spec.str()) != spec) std::abort();
  static const nki::Mesh mesh = nki::Mesh::iota({1, 2, 4}, {"r", "b", "m"});
  try {
    const auto axes = spec.resolve(mesh, spec.size());
    if (axes.size() != spec.size()) std::abort();
  } catch (const nki::UserError&) {
  }
  return 0;
}
