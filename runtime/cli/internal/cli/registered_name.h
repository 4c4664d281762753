/** \file Errors of a launch by name name the kernel as the user asked for it. */
#pragma once

#include <string>

#include "nki/registry.h"

namespace nki::cli {

/**
 * `e` as a launch of the kernel registered as `asked` words it. A kernel registered under
 * another name than its Kernel's (tensor_add_nc2 is tensor_add's Kernel on another grid, so
 * both share one artifact) raises its errors in the Kernel's name; those get `asked` instead.
 * Any other error is returned as it is.
 */
UserError in_registered_name(const UserError& e, const KernelRegistry& registry, const std::string& asked);

}  // namespace nki::cli
