/** \file nki::jit and kernel launches: kernel[grid](args...). */
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "nki/error.h"
#include "nki/grid.h"
#include "nki/kernel_body.h"
#include "nki/language.h"
#include "nki/schedule.h"
#include "nki/tensor.h"

namespace nki {

/** Which executor runs the instances. */
enum class Executor {
  halide,     ///< the IR compiled with Halide, once per kernel and signature (SPMD)
  reference,  ///< the reference interpreter: plain C++, bounds-checked
};
const char* executor_name(Executor e);

/** How a launch runs several busy cores on the host (LaunchOptions::core_threads). */
enum class CoreThreads {
  /// Each on a thread of its own, unless this trace's last timed such launch (every one on
  /// threads, every 16th on the calling thread) found the cores beside the longest-running one
  /// busy for less than a hand-off to a thread costs (a few microseconds): then one after the
  /// other on the calling thread.
  automatic,
  threads,  ///< always each on a thread of its own, all at once
  caller,   ///< always one after the other on the calling thread
};

/** How cores share compiled code. */
enum class CompileMode {
  spmd,  ///< one artifact for every core; rank and program ids are run-time values (the default)
  mpmd,  ///< legacy: one artifact per core, its program ids baked in as constants
};

struct LaunchOptions {
  Executor executor = Executor::halide;
  const sim::Device* device = nullptr;  ///< nullptr: the device of the first argument
  /// Checked mode: the reference interpreter with poisoned fresh memory, reads of unwritten
  /// elements, write conflicts and unwritten outputs reported (docs/reference.md); overrides `executor`.
  bool checked = false;
  CompileMode mode = CompileMode::spmd;
  /// Unroll factor of the kernel's outermost loops in the compiled code (1: rolled; docs/compile.md).
  int layer_unroll_factor = 1;
  /// A grid without nc factors is split over this many cores, NC0 first (place_instances); 1: all on NC0.
  int unannotated_cores = 1;
  /// Under MPI (nki/mpi_world.h): place the grid on every rank's cores (rank r's chip holds
  /// world cores r*n ... for n cores per device) and run here only this rank's instances, on
  /// inputs every rank holds whole; the outputs are then joined so every rank gets all of
  /// them. Every rank makes the launch. Without MPI (one rank) it changes nothing.
  bool span_ranks = false;
  /// Where nl.device_print lines go, in instance order, once every core has run (nullptr: std::cout).
  std::ostream* device_print = nullptr;
  /// Find the output elements no instance wrote, without checked mode: the outputs start as a
  /// marker pattern, and elements still holding it are confirmed by a second run (on copies of
  /// the arguments) that starts them as another; LaunchResult::unwritten counts them and they
  /// are zeroed. Off: an unwritten element is 0 (fresh outputs start zeroed, ir::stored_whole).
  bool find_unwritten = false;
  /// Host threads for several busy cores. Cores that meet (core_barrier, sendrecv) always run at once.
  CoreThreads core_threads = CoreThreads::automatic;
};

/** Output elements a launch with LaunchOptions::find_unwritten found no instance wrote. */
struct UnwrittenElements {
  std::size_t output = 0;  ///< which output, in the kernel's return order
  std::int64_t count = 0;
  std::int64_t first = 0;  ///< the first one's flat (row-major) index
};

/** Everything a launch did: outputs, placement and what it compiled. */
struct LaunchResult {
  std::vector<Tensor> outputs;
  GridSpec grid;
  /// Instances each simulated core ran, in its order (on the host a thread may run another
  /// core's last batches: CoreThreads).
  std::vector<CoreSchedule> cores;
  int compiled = 0;                 ///< distinct artifacts this launch compiled
  int reused = 0;                   ///< distinct artifacts it found compiled (in memory or the cache directory)
  std::vector<std::string> artifact_keys;  ///< distinct cache keys the cores used
  std::string ir_text;              ///< canonical IR of the traced kernel
  std::string ir_hash;
  std::vector<UnwrittenElements> unwritten;  ///< with find_unwritten: outputs with unwritten elements
};

struct TracedKernel;  // nki/traced_kernel.h

/**
 * Where a launch was called: the caller's file:line. The launch's own user errors, those no
 * line of the kernel body explains (err_argument_count, err_grid_exceeds_cores,
 * err_aliased_arguments, ...), carry it. Code that launches on a user's behalf (the nki
 * command, profile, sweep) passes CallSite::unknown(): its own line would tell the user nothing.
 */
struct CallSite {
  SourceLoc loc;
  CallSite(std::source_location at = std::source_location::current()) : loc(SourceLoc::from(at)) {}
  static CallSite unknown() {
    CallSite c;
    c.loc = {};
    return c;
  }
};

/** A launch call's first tensor, and the call's CallSite (a default argument cannot follow a pack). */
struct FirstArgument {
  const Tensor& tensor;
  CallSite site;
  FirstArgument(const Tensor& t, std::source_location at = std::source_location::current()) : tensor(t), site(at) {}
};

class Kernel;

/** kernel[grid]: a kernel bound to a launch grid, ready to be called. */
class BoundLaunch {
 public:
  BoundLaunch(const Kernel& k, GridSpec grid);

  BoundLaunch& with(LaunchOptions o) {
    options_ = o;
    return *this;
  }
  /** Runs and returns every detail of the launch. */
  LaunchResult run(const std::vector<Tensor>& args, CallSite site = {}) const;
  /** Runs and returns the kernel's (first) output. */
  template <class... T>
  Tensor operator()(FirstArgument first, const T&... rest) const {
    return first_output(run(std::vector<Tensor>{first.tensor, rest...}, first.site));
  }
  /** A launch of a kernel without arguments. */
  Tensor operator()(CallSite site = {}) const { return first_output(run({}, site)); }
  const GridSpec& grid() const { return grid_; }
  const Kernel& kernel() const { return *kernel_; }
  const LaunchOptions& options() const { return options_; }

 private:
  LaunchResult run_finding_unwritten(const std::vector<Tensor>& args) const;  ///< run, less the call site
  Tensor first_output(LaunchResult r) const;
  std::shared_ptr<const Kernel> kernel_;  ///< a copy of the handle: the launch outlives temporaries
  GridSpec grid_;
  LaunchOptions options_;
};

/**
 * A kernel made by nki::jit. It is traced once per argument signature (shapes,
 * dtypes) and grid, the trace validated, and compiled once per distinct IR.
 * Copies share their trace cache.
 */
class Kernel {
 public:
  /// Calls the user's body with symbolic tensors; returns the output tensor ids.
  using Body = std::function<std::vector<int>(const std::vector<language::tensor>&)>;

  Kernel(std::string name, std::size_t arity, Body body, std::vector<std::string> param_names);

  const std::string& name() const;
  std::size_t arity() const;

  /** kernel[g0, g1, ...]: bind a launch grid. */
  template <class... G>
  BoundLaunch operator[](G... axes) const {
    return BoundLaunch(*this, GridSpec{{language::grid_arg(axes).axis...}});
  }
  /** kernel[grid] for a grid built or parsed at run time. */
  BoundLaunch launch(GridSpec grid) const { return BoundLaunch(*this, std::move(grid)); }
  /** Launch without a grid (program_ndim() == 0). */
  template <class... T>
  Tensor operator()(FirstArgument first, const T&... rest) const {
    return BoundLaunch(*this, GridSpec{})(first, rest...);
  }
  Tensor operator()(CallSite site = {}) const { return BoundLaunch(*this, GridSpec{})(site); }

  /**
   * The validated trace for these argument shapes/dtypes and this grid, on a target of NeuronCore
   * generation `nc_version` (what isa::get_nc_version returns), for a world of `world_size`
   * ranks (rank_id()'s range; 1: a plain launch). Cached; nki/traced_kernel.h.
   */
  std::shared_ptr<const TracedKernel> trace(const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                                            const GridSpec& grid, int nc_version = 3, int world_size = 1) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/**
 * Makes a kernel from a callable taking nl::tensor arguments and returning an
 * nl::tensor, a std::tuple of them, or nothing. `param_names` name the arguments
 * in IR and messages (default in0, in1, ...).
 */
template <class F>
Kernel jit(std::string name, F f, std::vector<std::string> param_names = {}) {
  constexpr std::size_t n = detail::arity_of<std::decay_t<F>>::value;
  Kernel::Body body = [f = std::move(f)](const std::vector<language::tensor>& args) mutable {
    return detail::call_body(f, args, std::make_index_sequence<n>{});
  };
  return Kernel(std::move(name), n, std::move(body), std::move(param_names));
}

}  // namespace nki
