/** \file seed_pipeline_options: the compiler driver's flags -> front-end options, unroll factor, SPMD switches, mesh. */
#include "nki/driver_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <numeric>

#include "nki/error.h"
#include "nki/mesh.h"
#include "nki/simulator/target.h"

namespace nki {

namespace {

/// The mesh axes, major to minor: tensor-parallel ranks adjacent, as Megatron lays them out.
constexpr const char* kAxes[] = {"pipeline", "data", "tensor"};
/// Physical cores in a world, at most (each is a placement entry and a mesh device).
constexpr std::int64_t kMaxCores = 65536;

/** `text` as a whole decimal integer in [lo, hi], or nullopt. */
std::optional<std::int64_t> parse_int(std::string_view text, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

[[noreturn]] void refuse(const char* error, const std::string& what) { throw UserError(error, "", {}, what); }

int seed_lnc(const DriverFlags& f) {
  const bool trn2 = f.target == "trn2";
  if (!f.lnc) return trn2 ? 2 : 1;
  const std::optional<std::int64_t> v = parse_int(*f.lnc, 1, trn2 ? 2 : 1);
  if (v) return static_cast<int>(*v);
  if (trn2) refuse("err_invalid_lnc", fmt::format("--lnc \"{}\" on target trn2; expected 1 or 2", *f.lnc));
  refuse("err_invalid_lnc", fmt::format("--lnc \"{}\" on target {}; expected 1 (a logical core of more than one "
                                        "NeuronCore exists only on trn2)",
                                        *f.lnc, f.target));
}

int seed_cores(const DriverFlags& f, const sim::TargetSpec& spec, int lnc) {
  if (!f.cores) return spec.cores_per_chip;
  const std::optional<std::int64_t> v = parse_int(*f.cores, 1, kMaxCores);
  if (!v) {
    refuse("err_invalid_cores",
           fmt::format("--cores \"{}\"; expected a number of NeuronCores from 1 to {}", *f.cores, kMaxCores));
  }
  if (*v % lnc != 0) {
    refuse("err_invalid_cores", fmt::format("--cores {} is not a multiple of --lnc {}; expected whole logical cores "
                                            "of {} NeuronCores",
                                            *v, lnc, lnc));
  }
  return static_cast<int>(*v);
}

std::optional<std::string> seed_strategy(const DriverFlags& f) {
  if (f.distribution_strategy) {
    const std::string& s = *f.distribution_strategy;
    if (std::ranges::find(kDistributionStrategies, s) == std::end(kDistributionStrategies)) {
      refuse("err_unknown_distribution_strategy",
             fmt::format("unknown --distribution-strategy \"{}\"; expected one of {}", s,
                         fmt::join(kDistributionStrategies, ", ")));
    }
    if (f.distribution_type_llm_training && s != "llm-training") {
      refuse("err_conflicting_flags", fmt::format("--distribution-type-llm-training means --distribution-strategy "
                                                  "llm-training, but --distribution-strategy {} was given",
                                                  s));
    }
    return s;
  }
  if (f.distribution_type_llm_training) return "llm-training";
  return std::nullopt;
}

int seed_unroll(const DriverFlags& f, const std::optional<std::string>& strategy) {
  if (f.layer_unroll_factor) {
    const std::optional<std::int64_t> v = parse_int(*f.layer_unroll_factor, 1, kMaxLayerUnrollFactor);
    if (!v) {
      refuse("err_invalid_unroll_factor", fmt::format("--layer-unroll-factor \"{}\"; expected an integer from 1 to {}",
                                                      *f.layer_unroll_factor, kMaxLayerUnrollFactor));
    }
    return static_cast<int>(*v);
  }
  return strategy == "fsdp" ? kFsdpLayerUnrollFactor : 1;
}

/** The strategy's own split of `n` logical cores: {pipeline, data, tensor} (docs/compile.md). */
std::array<std::int64_t, 3> default_split(const std::optional<std::string>& strategy, std::int64_t n) {
  if (strategy == "llm-training" || strategy == "nemo") {
    const std::int64_t tensor = std::gcd(n, std::int64_t{8});  // tensor parallel within 8 adjacent ranks
    const std::int64_t pipeline = strategy == "nemo" && (n / tensor) % 2 == 0 ? 2 : 1;
    return {pipeline, n / tensor / pipeline, tensor};
  }
  return {1, n, 1};  // no strategy and fsdp: every logical core a data-parallel rank
}

/**
 * --mesh data=D,tensor=T,pipeline=P in any order; unnamed axes have size 1. With `n` the sizes
 * must multiply to n (the logical cores --cores gives); without, the mesh sets the world's size.
 */
std::array<std::int64_t, 3> parse_mesh(const std::string& text, std::optional<std::int64_t> n, int cores, int lnc) {
  std::array<std::int64_t, 3> sizes{1, 1, 1};
  std::array<bool, 3> named{false, false, false};
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      refuse("err_invalid_mesh", fmt::format("--mesh \"{}\": \"{}\" is not NAME=SIZE; expected "
                                             "data=D,tensor=T,pipeline=P",
                                             text, item));
    }
    const std::string_view name = item.substr(0, eq), size = item.substr(eq + 1);
    const auto* axis = std::ranges::find(kAxes, name);
    if (axis == std::end(kAxes)) {
      refuse("err_invalid_mesh",
             fmt::format("--mesh \"{}\": unknown axis \"{}\"; expected data, tensor or pipeline", text, name));
    }
    const auto a = static_cast<std::size_t>(axis - std::begin(kAxes));
    if (named[a]) refuse("err_invalid_mesh", fmt::format("--mesh \"{}\": axis {} is named twice", text, name));
    named[a] = true;
    const std::optional<std::int64_t> v = parse_int(size, 1, kMaxCores);
    if (!v) {
      refuse("err_invalid_mesh", fmt::format("--mesh \"{}\": size \"{}\" of axis {} is not an integer from 1 to {}",
                                             text, size, name, kMaxCores));
    }
    sizes[a] = *v;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  const std::int64_t product = sizes[0] * sizes[1] * sizes[2];
  if (!n && product * lnc > kMaxCores) {
    refuse("err_invalid_mesh", fmt::format("--mesh \"{}\": {} logical cores of {} NeuronCores; at most {} NeuronCores",
                                           text, product, lnc, kMaxCores));
  }
  if (n && product != *n) {
    refuse("err_invalid_mesh", fmt::format("--mesh \"{}\": the axis sizes multiply to {}; expected {} (--cores {} / "
                                           "--lnc {} logical cores)",
                                           text, product, *n, cores, lnc));
  }
  return sizes;
}

}  // namespace

PipelineOptions seed_pipeline_options(const DriverFlags& f) {
  const std::vector<std::string> targets = sim::target_names();
  if (std::ranges::find(targets, f.target) == targets.end()) {
    refuse("err_unknown_target",
           fmt::format("unknown --target \"{}\"; expected one of {}", f.target, fmt::join(targets, ", ")));
  }
  PipelineOptions o;
  o.target = f.target;
  o.lnc = seed_lnc(f);
  o.cores = seed_cores(f, sim::target_spec(f.target), o.lnc);
  o.distribution_strategy = seed_strategy(f);
  o.layer_unroll_factor = seed_unroll(f, o.distribution_strategy);
  // The user types the strategy's name; the front end is given the option it stands for.
  if (o.distribution_strategy == "llm-training") o.frontend_options.push_back("distribution-type-llm-training");
  if (o.distribution_strategy == "nemo") {
    o.frontend_options.push_back("distribution-type-llm-training");  // the NeMo preset (docs/compile.md)
    o.frontend_options.push_back("model-type=transformer");
  }
  // Two layers: the front end compiles SPMD; the back end spreads over the logical core only if it has cores to spread over.
  o.spmd = f.spmd;
  if (f.spmd) o.frontend_options.push_back("spmd");
  o.enable_internal_spmd_opt = f.spmd && o.lnc > 1;

  // --mesh without --cores sizes the world: one logical core per mesh device.
  std::array<std::int64_t, 3> sizes{};
  if (f.mesh && !f.cores) {
    sizes = parse_mesh(*f.mesh, std::nullopt, o.cores, o.lnc);
    o.cores = static_cast<int>(sizes[0] * sizes[1] * sizes[2] * o.lnc);
  } else {
    const std::int64_t n = o.logical_cores();
    sizes = f.mesh ? parse_mesh(*f.mesh, n, o.cores, o.lnc) : default_split(o.distribution_strategy, n);
  }
  const Mesh mesh = Mesh::iota({sizes[0], sizes[1], sizes[2]}, {kAxes[0], kAxes[1], kAxes[2]});
  for (std::size_t a = 0; a < 3; ++a) {
    o.mesh.push_back({kAxes[a], sizes[a]});
    o.replica_groups[kAxes[a]] = replica_groups(mesh, {AxisRef{kAxes[a]}}).groups;
  }
  return o;
}

Mesh PipelineOptions::device_mesh() const {
  Shape sizes;
  std::vector<std::string> names;
  for (const MeshAxisSize& a : mesh) {
    sizes.push_back(a.size);
    names.push_back(a.name);
  }
  return Mesh::iota(sizes, names);
}

std::string pipeline_options_json(const PipelineOptions& o) {
  nlohmann::ordered_json axes = nlohmann::ordered_json::array(), groups = nlohmann::ordered_json::object();
  for (const MeshAxisSize& a : o.mesh) {
    axes.push_back({{"name", a.name}, {"size", a.size}});
    groups[a.name] = o.replica_groups.at(a.name);
  }
  nlohmann::ordered_json j;
  j["target"] = o.target;
  j["lnc"] = o.lnc;
  j["cores"] = o.cores;
  j["spmd"] = o.spmd;
  j["enable_internal_spmd_opt"] = o.enable_internal_spmd_opt;
  j["distribution_strategy"] = o.distribution_strategy ? nlohmann::ordered_json(*o.distribution_strategy) : nullptr;
  j["layer_unroll_factor"] = o.layer_unroll_factor;
  j["frontend_options"] = o.frontend_options;
  j["mesh"] = {{"axes", axes}, {"replica_groups", groups}};
  return j.dump(2) + "\n";
}

}  // namespace nki
