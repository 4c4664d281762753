/** \file The host's memory: simulated HBM, tensors read from files and launch bookkeeping all live in it. */
#pragma once

#include <cstdint>

namespace nki::sim {

/** The host's physical memory in bytes (sysconf), measured once. */
std::int64_t host_memory_bytes();

}  // namespace nki::sim
