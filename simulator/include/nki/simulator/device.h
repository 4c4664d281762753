/** \file A simulated device: NeuronCores of one target sharing one HBM. */
#pragma once

#include <memory>
#include <string_view>

#include "nki/simulator/hbm.h"
#include "nki/simulator/target.h"

namespace nki::sim {

/**
 * The cores a launch can use and the HBM they share. The default is one logical
 * core of the target (trn2: LNC=2, two physical NeuronCores); `cores` sets the
 * physical core count, at most one chip's. Copies share the HBM: they are the same device.
 */
class Device {
 public:
  explicit Device(std::string_view target = "trn2", int cores = 0);

  const TargetSpec& spec() const { return *spec_; }
  int cores() const { return cores_; }
  Hbm& hbm() const { return *hbm_; }
  /** Whether two handles name the same device (the same HBM). */
  bool same_as(const Device& other) const { return hbm_ == other.hbm_; }

  /** The process-wide default device (trn2, 2 cores). */
  static Device& default_device();

 private:
  const TargetSpec* spec_;
  int cores_;
  std::shared_ptr<Hbm> hbm_;
};

}  // namespace nki::sim
