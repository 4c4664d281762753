/** \file What `nki mesh ... --json` prints, as JSON values: the command and the Python module give the same fields. */
#pragma once

#include <nlohmann/json.hpp>

#include "nki/replica_groups.h"
#include "nki/sharding.h"

namespace nki::cli {

/** {"replica_groups": [[0,1],...], "iota": "[2,2]<=[4]" or null}. */
nlohmann::ordered_json replica_groups_json(const ReplicaGroups& rg);

/** {"annotation", "iota_annotation" (or null), "devices": [{"device", "slices", "padding", "replica_id"}, ...]}. */
nlohmann::ordered_json sharding_json(const Sharding& s, const Shape& shape);

}  // namespace nki::cli
