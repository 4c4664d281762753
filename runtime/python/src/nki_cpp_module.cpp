/** \file The module nki_cpp: the kernel library's kernels from Python (nki/python.h). */
#include "nki/cli.h"
#include "nki/python.h"

namespace {

const nki::KernelRegistry& library_registry() {
  static const nki::KernelRegistry registry = [] {
    nki::KernelRegistry r;
    nki::cli::register_library_kernels(r);
    return r;
  }();
  return registry;
}

}  // namespace

PYBIND11_MODULE(nki_cpp, m) {
  m.doc() = "nki-cpp: NKI-style kernels on simulated NeuronCores, on numpy arrays";
  nki::python::define_module(m, library_registry());
}
