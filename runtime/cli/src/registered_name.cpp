/** \file A launch's errors in the registered name of its kernel. */
#include "cli/registered_name.h"

namespace nki::cli {

UserError in_registered_name(const UserError& e, const KernelRegistry& registry, const std::string& asked) {
  const RegisteredKernel* k = registry.find(asked);
  if (k == nullptr || k->kernel.name() == k->name || e.kernel() != k->kernel.name()) return e;
  return UserError(e.name(), k->name, e.location(), e.detail());
}

}  // namespace nki::cli
