/** \file The host's physical memory. */
#include "nki/simulator/host_memory.h"

#include <unistd.h>

namespace nki::sim {

std::int64_t host_memory_bytes() {
  static const std::int64_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : std::int64_t{1} << 62;
  }();
  return bytes;
}

}  // namespace nki::sim
