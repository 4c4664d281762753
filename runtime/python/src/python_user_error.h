/** \file nki::UserError as a Python exception of the module: `UserError` with the NKI error's name. */
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "cli/registered_name.h"
#include "nki/registry.h"

namespace nki::python {

/**
 * Creates `m.UserError` (an Exception with attribute `name`, e.g. "err_unknown_kernel") and
 * translates, for calls into `m`: nki::UserError to it, its message the one line the `nki`
 * command prints; nki::Interrupted to KeyboardInterrupt. An internal error stays a RuntimeError.
 */
void define_user_error(pybind11::module_& m);

/** Runs `body`; a nki::UserError it throws names the kernel `asked` as the registry has it (cli::in_registered_name). */
template <class Body>
auto naming_kernel(const KernelRegistry& registry, const std::string& asked, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const UserError& e) {
    throw cli::in_registered_name(e, registry, asked);
  }
}

}  // namespace nki::python
