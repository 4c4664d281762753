/** \file `nki mesh`: replica groups of mesh axes, and the sharding of a tensor over a mesh. */
#include "mesh_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "nki/error.h"
#include "nki/mesh.h"
#include "nki/partition_spec.h"
#include "nki/replica_groups.h"
#include "nki/sharding.h"
#include "cli/mesh_flag.h"
#include "cli/mesh_json.h"
#include "cli/shape_flag.h"

namespace nki::cli {

namespace {


std::string replica_groups_output(const ReplicaGroups& rg, bool json) {
  if (json) return replica_groups_json(rg).dump() + "\n";
  return fmt::format("replica_groups: {}\niota: {}\n", rg.str(),
                     rg.iota ? *rg.iota : "none (the device order is not a transposed iota)");
}

std::string sharding_output(const Sharding& s, const Shape& shape, bool json) {
  if (json) return sharding_json(s, shape).dump() + "\n";
  const std::optional<std::string> iota = s.iota_str();
  const std::vector<ShardPlacement> placement = s.placement(shape);
  std::string text = fmt::format("annotation: {}\niota_annotation: {}\n", s.str(),
                                 iota ? *iota : "none (the device order is not a transposed iota)");
  for (const ShardPlacement& p : placement) {
    std::vector<std::string> slices;
    for (const auto& sl : p.slices) slices.push_back(fmt::format("{}:{}", sl[0], sl[1]));
    text += fmt::format("device {}: slices [{}] padding [{}] replica_id {}\n", p.device, fmt::join(slices, ", "),
                        fmt::join(p.padding, ", "), p.replica_id);
  }
  return text;
}

}  // namespace

struct MeshCommand::State {
  CLI::App* mesh = nullptr;
  CLI::App* groups = nullptr;
  CLI::App* sharding = nullptr;
  std::optional<std::string> mesh_flag, device_ids, axes, spec, shape;
  bool json = false;
};

MeshCommand::MeshCommand(CLI::App& app) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.mesh = app.add_subcommand("mesh", "Device meshes: replica groups of mesh axes, the sharding of a tensor");
  s.mesh->allow_extras();
  s.groups = s.mesh->add_subcommand("replica-groups", "Replica groups of a collective over mesh axes (as Shardy computes them)");
  s.sharding = s.mesh->add_subcommand("sharding", "HloSharding of a tensor over a mesh, and each device's slices");
  for (CLI::App* sub : {s.groups, s.sharding}) {
    sub->allow_extras();
    sub->add_option("--mesh", s.mesh_flag, "Mesh axes in order, name=size, e.g. x=2,y=4 (required)");
    sub->add_option("--device-ids", s.device_ids, "Device ids laid row-major into the mesh (default 0,1,...)");
    sub->add_flag("--json", s.json, "Print JSON");
  }
  s.groups->add_option("--axes", s.axes, "Reduction axes in order, e.g. y or x,y or y:(1)2 (required)");
  s.sharding->add_option("--spec", s.spec, "Partition spec in Python tuple syntax, e.g. \"(('r','b'), None)\" (required)");
  s.sharding->add_option("--shape", s.shape, "Tensor shape, e.g. 16x16 (required)");
}

MeshCommand::~MeshCommand() = default;

bool MeshCommand::parsed() const { return s_->mesh->parsed(); }

std::string MeshCommand::name() const {
  if (s_->groups->parsed()) return "nki mesh replica-groups";
  if (s_->sharding->parsed()) return "nki mesh sharding";
  return "nki mesh";
}

int MeshCommand::run(std::ostream& out) const {
  const State& s = *s_;
  auto required = [](const std::optional<std::string>& v, const char* flag) -> const std::string& {
    if (!v) throw UserError("", "", {}, fmt::format("{} is required", flag));
    return *v;
  };
  auto refuse_extras = [](const CLI::App* app) {
    const std::vector<std::string> extras = app->remaining();
    if (!extras.empty()) {
      throw UserError("", "", {},
                      fmt::format("unexpected argument{} {}", extras.size() > 1 ? "s" : "", fmt::join(extras, " ")));
    }
  };
  if (!s.groups->parsed() && !s.sharding->parsed()) {
    const std::vector<std::string> extras = s.mesh->remaining();
    if (!extras.empty() && !extras.front().starts_with('-')) {
      throw UserError("", "", {},
                      fmt::format("unknown subcommand \"{}\"; subcommands: replica-groups, sharding (see nki mesh "
                                  "--help)",
                                  extras.front()));
    }
    refuse_extras(s.mesh);
    throw UserError("", "", {}, "a subcommand is required: replica-groups or sharding (see nki mesh --help)");
  }
  refuse_extras(s.mesh);
  if (s.groups->parsed()) {
    refuse_extras(s.groups);
    const Mesh mesh = make_mesh(required(s.mesh_flag, "--mesh"), s.device_ids);
    std::vector<AxisRef> axes;
    const std::string& axes_flag = required(s.axes, "--axes");
    if (!axes_flag.empty())
      for (std::string_view a : split(axes_flag, ',')) axes.push_back(AxisRef::parse(a));
    out << replica_groups_output(replica_groups(mesh, axes), s.json);
    return 0;
  }
  refuse_extras(s.sharding);
  const Mesh mesh = make_mesh(required(s.mesh_flag, "--mesh"), s.device_ids);
  const PartitionSpec spec = PartitionSpec::parse(required(s.spec, "--spec"));
  const Shape shape = parse_shape_flag(required(s.shape, "--shape"));
  out << sharding_output(Sharding::from_spec(mesh, spec, shape.size()), shape, s.json);
  return 0;
}

}  // namespace nki::cli
