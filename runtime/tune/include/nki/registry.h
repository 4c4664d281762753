/** \file Kernels known by name to the `nki` command, with the grid each launches on by default. */
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nki/kernel.h"
#include "nki/tunable_kernel.h"

namespace nki {

/** Grids a kernel takes besides those of its default grid's logical shape, and how messages describe them. */
struct OtherGrids {
  std::function<bool(const GridSpec&)> accepts;
  std::string description;  ///< e.g. "one axis of any size, e.g. \"spmd_dim(1,nc(2))\""
};

struct RegisteredKernel {
  std::string name;
  std::string description;
  Kernel kernel;
  /// The launch grid for these input shapes; throws nki::UserError naming the shapes when they do not fit.
  std::function<GridSpec(const std::vector<Shape>&)> default_grid;
  /// Unset: a --grid must have the default grid's logical shape.
  std::optional<OtherGrids> other_grids = std::nullopt;
};

class KernelRegistry {
 public:
  /** Adds a kernel; a second kernel of the same name is an error. */
  void add(RegisteredKernel k);
  /** nullptr when no kernel has that name. */
  const RegisteredKernel* find(const std::string& name) const;
  /** The kernel of that name; throws nki::UserError (err_unknown_kernel) listing the known ones when there is none. */
  const RegisteredKernel& at(const std::string& name) const;
  /** All kernels, sorted by name. */
  std::vector<const RegisteredKernel*> all() const;
  std::vector<std::string> names() const;

  /**
   * Adds a tunable kernel. Unless a plain kernel of that name is registered already (which then
   * stays what `nki run` launches without --autotune), it is also registered as one, built and
   * gridded with its default configuration, so `nki run` and `nki profile` take it as is.
   */
  void add_tunable(TunableKernel k);
  /** nullptr when no tunable kernel has that name. */
  const TunableKernel* find_tunable(const std::string& name) const;
  /** The names of the tunable kernels, sorted. */
  std::vector<std::string> tunable_names() const;

 private:
  std::vector<RegisteredKernel> kernels_;
  std::deque<TunableKernel> tunables_;  ///< a deque: pointers handed out stay valid as kernels are added
};

/**
 * Checks that `grid` covers exactly the logical grid `expected` the kernel needs for these
 * inputs, or is one of the kernel's other grids; throws nki::UserError naming both otherwise.
 */
void check_grid_fits(const RegisteredKernel& k, const GridSpec& grid, const GridSpec& expected,
                     const std::vector<Shape>& shapes);

}  // namespace nki
