/**
 * \file Kernels from Python: the functions of the `nki_cpp` module, for a registry of your own.
 *
 *     PYBIND11_MODULE(my_kernels, m) {
 *       static const nki::KernelRegistry registry = my_registry();  // outlives the module
 *       nki::python::define_module(m, registry);
 *     }
 *
 * gives `my_kernels.run(...)`, `.profile`, `.bench`, `.kernels`, `.mesh` and `.UserError`
 * for those kernels, as `nki_cpp` has them for the library's (examples/consumer_python).
 */
#pragma once

#include <pybind11/pybind11.h>

#include "nki/registry.h"

namespace nki::python {

/**
 * Adds to `m`: kernels(), run(), profile(), bench(), the submodule mesh (replica_groups,
 * sharding) and the exception class UserError (attribute `name`: the NKI error name), over
 * the kernels of `registry`, which must outlive the module (a static does).
 */
void define_module(pybind11::module_& m, const KernelRegistry& registry);

}  // namespace nki::python
