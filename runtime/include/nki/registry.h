/** \file Kernels known by name to the `nki` command, with the grid each launches on by default. */
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nki/kernel.h"

namespace nki {

struct RegisteredKernel {
  std::string name;
  std::string description;
  Kernel kernel;
  /// The launch grid for these input shapes; throws nki::UserError naming the shapes when they do not fit.
  std::function<GridSpec(const std::vector<Shape>&)> default_grid;
};

class KernelRegistry {
 public:
  /** Adds a kernel; a second kernel of the same name is an error. */
  void add(RegisteredKernel k);
  /** nullptr when no kernel has that name. */
  const RegisteredKernel* find(const std::string& name) const;
  /** All kernels, sorted by name. */
  std::vector<const RegisteredKernel*> all() const;
  std::vector<std::string> names() const;

 private:
  std::vector<RegisteredKernel> kernels_;
};

/**
 * Checks that `grid` covers exactly the logical grid `expected` the kernel needs for
 * these inputs; throws nki::UserError naming both otherwise.
 */
void check_grid_fits(const RegisteredKernel& k, const GridSpec& grid, const GridSpec& expected,
                     const std::vector<Shape>& shapes);

}  // namespace nki
