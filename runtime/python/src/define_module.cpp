/**
 * \file The module's functions: kernels, run, profile, bench and mesh, each checking its
 * arguments as the `nki` command checks its flags, then working with the GIL released.
 */
#include "nki/python.h"

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>
#include <ostream>

#include "cli/argument_flags.h"
#include "cli/launch_choice.h"
#include "cli/mesh_flag.h"
#include "cli/mesh_json.h"
#include "cli/pending_file.h"
#include "cli/sweep_spec.h"
#include "cli/sweep_table.h"
#include "json_values.h"
#include "launch_without_gil.h"
#include "nki/partition_spec.h"
#include "nki/profile.h"
#include "nki/simulator/cost_model.h"
#include "nki/simulator/target.h"
#include "nki/sweep.h"
#include "numpy_arrays.h"
#include "python_user_error.h"

namespace nki::python {

namespace py = pybind11;

namespace {

/** A stream that drops what it is given: choose_tuned_launch's notes are about --autotune, which the module does not take. */
struct NullStream : std::ostream {
  NullStream() : std::ostream(nullptr) {}
};

/** "argument 2": how messages name the i-th (from 0) positional argument. */
std::string argument_name(std::size_t i) { return fmt::format("argument {}", i + 1); }

void check_argument_count(const std::string& kernel, std::size_t arity, std::size_t given, const char* what) {
  if (given != arity) {
    throw UserError("err_argument_count", kernel, {}, fmt::format("takes {} {}, {} given", arity, what, given));
  }
}

std::optional<GridSpec> grid_of(const std::optional<std::string>& grid) {
  if (!grid) return std::nullopt;
  return parse_grid(*grid);
}

/** A shape given as a tuple or list of positive ints; err_invalid_shape naming it otherwise. */
Shape shape_of(const py::handle& value, const std::string& subject) {
  const std::string text = py::cast<std::string>(py::repr(value));
  Shape shape;
  if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
    for (const py::handle& d : value) {
      if (!py::isinstance<py::int_>(d) || py::isinstance<py::bool_>(d) || py::cast<std::int64_t>(d) <= 0) {
        shape.clear();
        break;
      }
      shape.push_back(py::cast<std::int64_t>(d));
    }
  }
  if (shape.empty()) {
    throw UserError("err_invalid_shape", "", {},
                    fmt::format("{}: {} is neither a numpy array nor a shape; expected an array or a tuple of positive "
                                "sizes, e.g. (4096, 8192)",
                                subject, text));
  }
  return shape;
}

py::dict kernels(const KernelRegistry& registry) {
  py::dict out;
  for (const RegisteredKernel* k : registry.all()) out[py::str(k->name)] = k->description;
  return out;
}

/** run(): `nki run` on arrays, the outputs returned instead of written. */
py::object run(const KernelRegistry& registry, const std::string& name, const py::args& arrays, const std::string& dtype,
               const std::optional<std::string>& grid, const std::string& executor, const std::string& target,
               bool checked) {
  const RegisteredKernel& k = registry.at(name);
  const auto [outputs, unwritten] = naming_kernel(registry, name, [&] {
    check_argument_count(k.name, k.kernel.arity(), arrays.size(), "arrays");
    const DType float_dtype = cli::parse_dtype_flag(dtype, "dtype=");
    const Executor chosen_executor = cli::parse_executor_flag(executor, "executor=");
    (void)sim::target_spec(target);  // err_unknown_target naming it
    const std::optional<GridSpec> requested = grid_of(grid);
    std::vector<ArrayArgument> read;
    std::vector<TensorSpec> specs;
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      read.emplace_back(arrays[i], argument_name(i));
      specs.push_back({read.back().shape(), read.back().dtype(float_dtype)});
    }
    NullStream notes;
    cli::LaunchChoice chosen = cli::choose_tuned_launch("nki_cpp.run", k, {}, specs, target, requested, notes);
    return without_gil([&] {
      const sim::Device device(target, 2);
      std::vector<Tensor> args;
      for (const ArrayArgument& a : read) args.push_back(a.tensor(float_dtype, device));
      LaunchOptions options{chosen_executor, &device, checked};
      options.find_unwritten = !checked;  // checked mode refuses an unwritten output itself
      LaunchResult r = chosen.launch.with(options).run(args, CallSite::unknown());
      return std::pair{std::move(r.outputs), std::move(r.unwritten)};
    });
  });
  if (outputs.empty()) throw UserError("err_no_output", k.name, {}, "the kernel returns no tensor");
  for (const UnwrittenElements& u : unwritten) {
    const Tensor& t = outputs[u.output];
    const std::string warning = fmt::format(
        "nki_cpp.run: {}: no instance wrote {} of {} elements of output {} (the first [{}]); they are 0. checked=True "
        "names the first read or write that went wrong",
        k.name, u.count, t.elements(), u.output + 1, fmt::join(coord_of_flat(t.shape(), u.first), ","));
    if (PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
  }
  if (outputs.size() == 1) return output_array(outputs[0]);
  py::tuple all(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) all[i] = output_array(outputs[i]);
  return all;
}

/** profile(): `nki profile --json` of arrays' or shapes' arguments; `trace` writes the Perfetto timeline. */
py::object profile(const KernelRegistry& registry, const std::string& name, const py::args& arguments,
                   const std::string& dtype, const std::string& target, const std::optional<std::string>& grid,
                   const std::optional<std::string>& trace) {
  const RegisteredKernel& k = registry.at(name);
  const std::string json = naming_kernel(registry, name, [&] {
    check_argument_count(k.name, k.kernel.arity(), arguments.size(), "arguments (arrays or shapes)");
    const DType float_dtype = cli::parse_dtype_flag(dtype, "dtype=");
    (void)sim::target_spec(target);  // err_unknown_target naming it
    const std::optional<GridSpec> requested = grid_of(grid);
    if (trace && trace->empty()) throw UserError("err_output_not_writable", "", {}, "trace= is an empty path");
    std::vector<TensorSpec> specs;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      if (py::isinstance<py::array>(arguments[i])) {
        const ArrayArgument a(arguments[i], argument_name(i));
        specs.push_back({a.shape(), a.dtype(float_dtype)});
      } else {
        specs.push_back({shape_of(arguments[i], argument_name(i)), float_dtype});
      }
    }
    NullStream notes;
    const cli::LaunchChoice chosen = cli::choose_tuned_launch("nki_cpp.profile", k, {}, specs, target, requested, notes);
    std::optional<cli::PendingFile> trace_file;
    if (trace) trace_file.emplace(*trace);
    return without_gil([&] {
      ProfileReport r = nki::profile(chosen.launch, specs, target, trace.has_value());
      r.kernel = k.name;  // tensor_add_nc2 is tensor_add's Kernel on another grid: the report names what was asked
      if (trace_file) {
        trace_file->write(sim::chrome_trace_json(r));
        trace_file->commit();
      }
      return sim::profile_json(r);
    });
  });
  return python_value(json);
}

/** bench(): `nki bench --json`'s rows for shapes' arguments; the best is recorded unless record=False. */
py::object bench(const KernelRegistry& registry, const std::string& name, const std::string& sweep_text,
                 const std::vector<py::object>& shapes, const std::string& dtype, const std::string& target,
                 const std::string& metric, int iters, bool record) {
  const std::string json = naming_kernel(registry, name, [&] {
    const TunableKernel& k = cli::find_tunable_kernel(registry, name);
    const std::string described_as = fmt::format("sweep=\"{}\"", sweep_text);
    const std::vector<TuningConfig> configs = sweep_configs(k, cli::parse_sweep(sweep_text), described_as);
    check_argument_count(k.name, k.make(k.defaults()).arity(), shapes.size(), "shapes");
    const DType float_dtype = cli::parse_dtype_flag(dtype, "dtype=");
    (void)sim::target_spec(target);  // err_unknown_target naming it
    SweepOptions options;
    options.metric = cli::parse_metric_flag(metric, "metric=");
    check_iters(iters, options.metric, "iters=");
    options.iters = iters;
    options.record = record;
    options.described_as = described_as;
    std::vector<TensorSpec> specs;
    for (std::size_t i = 0; i < shapes.size(); ++i) specs.push_back({shape_of(shapes[i], fmt::format("shape {}", i + 1)), float_dtype});
    return without_gil([&] {
      const std::vector<SweepRow> rows = nki::sweep(k, configs, specs, target, options);
      return cli::sweep_json(k.name, specs, target, options.metric, iters, rows);
    });
  });
  return python_value(json)["configs"];
}

/** A mesh given as "x=2,y=4" or {"x": 2, "y": 4}, with device ids laid row-major (default 0, 1, ...). */
Mesh mesh_of(const py::handle& mesh, const std::optional<std::vector<int>>& device_ids) {
  std::string text;
  if (py::isinstance<py::dict>(mesh)) {
    std::vector<std::string> entries;
    for (const auto& [axis, size] : py::reinterpret_borrow<py::dict>(mesh)) {
      entries.push_back(fmt::format("{}={}", py::cast<std::string>(py::str(axis)), py::cast<std::string>(py::str(size))));
    }
    text = fmt::format("{}", fmt::join(entries, ","));
  } else if (py::isinstance<py::str>(mesh)) {
    text = py::cast<std::string>(mesh);
  } else {
    throw UserError("err_invalid_mesh", "", {},
                    fmt::format("mesh={}: expected axes in order as \"x=2,y=4\" or {{\"x\": 2, \"y\": 4}}",
                                py::cast<std::string>(py::repr(mesh))));
  }
  std::optional<std::string> ids;
  if (device_ids) ids = fmt::format("{}", fmt::join(*device_ids, ","));
  return cli::make_mesh(text, ids);
}

/** Axes given as "x,y" or ["x", "y"] (each as `nki mesh --axes` spells one, e.g. "y:(1)2"). */
std::vector<AxisRef> axes_of(const py::handle& axes) {
  std::vector<std::string> names;
  if (py::isinstance<py::str>(axes)) {
    const std::string text = py::cast<std::string>(axes);
    if (!text.empty())
      for (std::string_view a : cli::split(text, ',')) names.emplace_back(a);
  } else {
    names = py::cast<std::vector<std::string>>(axes);
  }
  std::vector<AxisRef> out;
  for (const std::string& a : names) out.push_back(AxisRef::parse(a));
  return out;
}

void define_mesh(py::module_& m) {
  py::module_ mesh = m.def_submodule("mesh", "Device meshes: the results of `nki mesh`, as Python values");
  mesh.def(
      "replica_groups",
      [](const py::object& mesh_axes, const py::object& axes, const std::optional<std::vector<int>>& device_ids) {
        const Mesh mesh = mesh_of(mesh_axes, device_ids);
        return python_value(cli::replica_groups_json(replica_groups(mesh, axes_of(axes))).dump());
      },
      py::arg("mesh"), py::arg("axes"), py::arg("device_ids") = py::none(),
      "The replica groups of a collective over `axes` of `mesh` (as Shardy computes them): "
      "{'replica_groups': [[...], ...], 'iota': '[2,2]<=[4]' or None}, as `nki mesh replica-groups --json`.");
  mesh.def(
      "sharding",
      [](const py::object& mesh_axes, const py::object& spec, const py::object& shape,
         const std::optional<std::vector<int>>& device_ids) {
        const Mesh mesh = mesh_of(mesh_axes, device_ids);
        // A spec as Python writes it, (('r', 'b'), None), is its own repr in the grammar --spec reads.
        const std::string spec_text = py::isinstance<py::str>(spec) ? py::cast<std::string>(spec)
                                                                    : py::cast<std::string>(py::repr(spec));
        const Shape tensor_shape = shape_of(shape, "shape");
        const PartitionSpec parsed = PartitionSpec::parse(spec_text);
        return python_value(cli::sharding_json(Sharding::from_spec(mesh, parsed, tensor_shape.size()), tensor_shape).dump());
      },
      py::arg("mesh"), py::arg("spec"), py::arg("shape"), py::arg("device_ids") = py::none(),
      "The HloSharding of a tensor of `shape` over `mesh` by the partition spec `spec` and each device's "
      "slices, as `nki mesh sharding --json`.");
}

}  // namespace

void define_module(py::module_& m, const KernelRegistry& registry) {
  const KernelRegistry* r = &registry;
  define_user_error(m);
  m.def(
      "kernels", [r] { return kernels(*r); },
      "The registered kernels: {name: one-line description}, as `nki list`.");
  m.def(
      "run",
      [r](const std::string& name, const py::args& arrays, const std::string& dtype, const std::optional<std::string>& grid,
          const std::string& executor, const std::string& target, bool checked) {
        return run(*r, name, arrays, dtype, grid, executor, target, checked);
      },
      py::arg("name"), py::kw_only(), py::arg("dtype") = "bf16", py::arg("grid") = py::none(),
      py::arg("executor") = "halide", py::arg("target") = "trn2", py::arg("checked") = false,
      "Launches kernel `name` on numpy arrays (float32, float16, float64, ints, bool; C order), converted as `nki "
      "run` converts .npy inputs: float ones rounded to `dtype`. Returns the output as an array (float32, or the "
      "output's integer dtype), a tuple of them when the kernel returns several. `grid` in NKI spelling, e.g. "
      "\"spmd_dim(2,nc(2)),4\"; checked=True runs checked mode. The GIL is released meanwhile; Ctrl-C stops it.");
  m.def(
      "profile",
      [r](const std::string& name, const py::args& arguments, const std::string& dtype, const std::string& target,
          const std::optional<std::string>& grid, const std::optional<std::string>& trace) {
        return profile(*r, name, arguments, dtype, target, grid, trace);
      },
      py::arg("name"), py::kw_only(), py::arg("dtype") = "bf16", py::arg("target") = "trn2",
      py::arg("grid") = py::none(), py::arg("trace") = py::none(),
      "The cost model's estimate of a launch of `name`: the dict `nki profile --json` prints. Each argument is an "
      "array (its shape, and its dtype when integer) or a shape tuple; trace=PATH writes the timeline as Chrome "
      "Trace Event JSON (Perfetto).");
  m.def(
      "bench",
      [r](const std::string& name, const std::string& sweep, const std::vector<py::object>& shapes,
          const std::string& dtype, const std::string& target, const std::string& metric, int iters, bool record) {
        return bench(*r, name, sweep, shapes, dtype, target, metric, iters, record);
      },
      py::arg("name"), py::kw_only(), py::arg("sweep"), py::arg("shapes"), py::arg("dtype") = "bf16",
      py::arg("target") = "trn2", py::arg("metric") = "simulated", py::arg("iters") = 3, py::arg("record") = true,
      "Sweeps the tile sizes of tunable kernel `name` (sweep=\"P=32,64,128;F=64..8192\") on arguments of `shapes`: "
      "a dict per configuration, best first, with the fields of `nki bench --json`'s configs. The best is recorded "
      "for `nki run --autotune` unless record=False.");
  define_mesh(m);
}

}  // namespace nki::python
