/** \file Parametrized library kernels: one Kernel per parameter value, made on first use. */
#pragma once

#include <map>
#include <mutex>

#include "nki/kernel.h"

namespace nki::kernels {

/** The kernel `make(key)` for this key, made once (a kernel's compiled artifacts are cached per Kernel). */
template <class Key, class Make>
Kernel memo_kernel(const Key& key, Make make) {
  static std::mutex mu;
  static std::map<Key, Kernel> made;
  const std::lock_guard lock(mu);
  auto it = made.find(key);
  if (it == made.end()) it = made.emplace(key, make(key)).first;
  return it->second;
}

}  // namespace nki::kernels
