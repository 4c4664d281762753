/** \file Joining a world launch's outputs: each element from the rank that wrote it. */
#include "world_outputs.h"

#include <fmt/format.h>

#include <cstring>

#include "nki/error.h"

namespace nki {

void join_rank_outputs(Communicator& world, const std::string& kernel, const std::string& tensor, Tensor& out,
                       const std::vector<std::byte>& initial) {
  const auto bytes = static_cast<std::size_t>(out.bytes());
  const std::vector<std::string> copies =
      world.all_gather_text(std::string(reinterpret_cast<const char*>(out.data()), bytes));
  const auto eb = static_cast<std::size_t>(dtype_bytes(out.dtype()));
  std::memcpy(out.data(), initial.data(), bytes);
  std::vector<int> writer(static_cast<std::size_t>(out.elements()), -1);
  for (std::size_t r = 0; r < copies.size(); ++r) {
    const auto* copy = reinterpret_cast<const std::byte*>(copies[r].data());
    for (std::size_t e = 0, at = 0; at < bytes; ++e, at += eb) {
      if (std::memcmp(copy + at, initial.data() + at, eb) == 0) continue;
      if (writer[e] >= 0 && std::memcmp(copy + at, out.data() + at, eb) != 0) {
        throw UserError("err_instances_write_same_element", kernel, {},
                        fmt::format("element {} (row-major) of tensor {} {} is written by instances on rank {} and on "
                                    "rank {} with different values",
                                    e, tensor, shape_str(out.shape()), writer[e], r));
      }
      writer[e] = static_cast<int>(r);
      std::memcpy(out.data() + at, copy + at, eb);
    }
  }
}

}  // namespace nki
