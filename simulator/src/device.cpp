/** \file Simulated devices. */
#include "nki/simulator/device.h"

#include <fmt/format.h>

#include "nki/error.h"

namespace nki::sim {

Device::Device(std::string_view target, int cores) : spec_(&target_spec(target)) {
  cores_ = cores == 0 ? spec_->default_lnc : cores;
  if (cores_ < 1 || cores_ > spec_->cores_per_chip) {
    throw UserError("err_invalid_core_count", "", {},
                    fmt::format("{} NeuronCores requested on {}; one chip has 1 to {}", cores, spec_->name,
                                spec_->cores_per_chip));
  }
  hbm_ = std::make_shared<Hbm>(spec_->hbm_bytes);
}

Device& Device::default_device() {
  static Device device("trn2", 0);
  return device;
}

}  // namespace nki::sim
