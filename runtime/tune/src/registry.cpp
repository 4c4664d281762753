/** \file The kernel registry of the `nki` command. */
#include "nki/registry.h"

#include <fmt/format.h>

#include <algorithm>

#include "nki/error.h"

namespace nki {

void KernelRegistry::add(RegisteredKernel k) {
  if (find(k.name) != nullptr) {
    throw UserError("err_duplicate_kernel", k.name, {}, fmt::format("a kernel named \"{}\" is already registered", k.name));
  }
  kernels_.push_back(std::move(k));
}

const RegisteredKernel* KernelRegistry::find(const std::string& name) const {
  for (const RegisteredKernel& k : kernels_)
    if (k.name == name) return &k;
  return nullptr;
}

const RegisteredKernel& KernelRegistry::at(const std::string& name) const {
  if (const RegisteredKernel* k = find(name)) return *k;
  throw UserError("err_unknown_kernel", "", {},
                  fmt::format("unknown kernel \"{}\"; known kernels: {}", name, fmt::join(names(), ", ")));
}

std::vector<const RegisteredKernel*> KernelRegistry::all() const {
  std::vector<const RegisteredKernel*> out;
  for (const RegisteredKernel& k : kernels_) out.push_back(&k);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return out;
}

std::vector<std::string> KernelRegistry::names() const {
  std::vector<std::string> out;
  for (const RegisteredKernel* k : all()) out.push_back(k->name);
  return out;
}

void KernelRegistry::add_tunable(TunableKernel k) {
  if (find_tunable(k.name) != nullptr) {
    throw UserError("err_duplicate_kernel", k.name, {},
                    fmt::format("a tunable kernel named \"{}\" is already registered", k.name));
  }
  if (find(k.name) == nullptr) {
    const TuningConfig defaults = k.defaults();
    add({k.name, k.description, k.make(defaults),
         [grid = k.grid, defaults](const std::vector<Shape>& shapes) { return grid(defaults, shapes); }});
  }
  tunables_.push_back(std::move(k));
}

const TunableKernel* KernelRegistry::find_tunable(const std::string& name) const {
  for (const TunableKernel& k : tunables_)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> KernelRegistry::tunable_names() const {
  std::vector<std::string> out;
  for (const TunableKernel& k : tunables_) out.push_back(k.name);
  std::sort(out.begin(), out.end());
  return out;
}

void check_grid_fits(const RegisteredKernel& k, const GridSpec& grid, const GridSpec& expected,
                     const std::vector<Shape>& shapes) {
  if (grid.logical_shape() == expected.logical_shape()) return;
  if (k.other_grids && k.other_grids->accepts(grid)) return;
  std::vector<std::string> s;
  for (const Shape& x : shapes) s.push_back(shape_str(x));
  // A kernel launched without a grid has no grid string to suggest: say to leave --grid out.
  const std::string needed = expected.axes.empty() ? "need no grid (leave out --grid)"
                                                   : fmt::format("need logical shape {} (e.g. \"{}\")",
                                                                 shape_str(expected.logical_shape()), expected.str());
  throw UserError("err_grid_does_not_fit", k.name, {},
                  fmt::format("grid \"{}\" has logical shape {}, but inputs {} {}{}", grid.str(),
                              shape_str(grid.logical_shape()), fmt::join(s, " "), needed,
                              k.other_grids ? ", or " + k.other_grids->description : ""));
}

}  // namespace nki
