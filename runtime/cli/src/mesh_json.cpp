/** \file The JSON of `nki mesh replica-groups` and `nki mesh sharding`. */
#include "cli/mesh_json.h"

#include <optional>

namespace nki::cli {

nlohmann::ordered_json replica_groups_json(const ReplicaGroups& rg) {
  nlohmann::ordered_json j;
  j["replica_groups"] = rg.groups;
  j["iota"] = rg.iota ? nlohmann::ordered_json(*rg.iota) : nlohmann::ordered_json(nullptr);
  return j;
}

nlohmann::ordered_json sharding_json(const Sharding& s, const Shape& shape) {
  const std::optional<std::string> iota = s.iota_str();
  nlohmann::ordered_json j;
  j["annotation"] = s.str();
  j["iota_annotation"] = iota ? nlohmann::ordered_json(*iota) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const ShardPlacement& p : s.placement(shape)) {
    devices.push_back({{"device", p.device}, {"slices", p.slices}, {"padding", p.padding}, {"replica_id", p.replica_id}});
  }
  j["devices"] = devices;
  return j;
}

}  // namespace nki::cli
