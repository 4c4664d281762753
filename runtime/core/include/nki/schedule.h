/** \file Which grid instances a NeuronCore runs, and in what order. */
#pragma once

#include "nki/instance_ids.h"

namespace nki {

/** The instances (logical program ids) one NeuronCore runs, in the order it runs them. */
struct CoreSchedule {
  int nc;
  InstanceIds instances;
};

}  // namespace nki
