/** \file Target specs from the published hardware numbers (see the REFERENCE table). */
#include "nki/simulator/target.h"

#include <fmt/format.h>

#include <array>

#include "nki/error.h"

namespace nki::sim {

namespace {
constexpr std::int64_t KiB = 1024, GiB = 1024 * 1024 * KiB;
TargetSpec make(std::string name, int cores, int lnc, std::int64_t hbm, double te, double ve, double se, double ge,
                double hbm_gbps, double dma_gbps, double link_gbps, bool shared_port, int nc_version) {
  TargetSpec s{std::move(name), cores, lnc, hbm, 128 * 192 * KiB, 128 * 16 * KiB};
  s.tensor_ghz = te;
  s.vector_ghz = ve;
  s.scalar_ghz = se;
  s.gpsimd_ghz = ge;
  s.hbm_gbps = hbm_gbps;
  s.dma_queue_gbps = dma_gbps;
  s.link_gbps = link_gbps;
  s.vector_gpsimd_share_sbuf_port = shared_port;
  s.nc_version = nc_version;
  return s;
}
// NeuronCore-v2 (trn1, inf2) and -v3 (trn2) from the public tables. trn3 has no public per-core
// table: its HBM capacity and bandwidth follow AWS's launch statement (144 GB, 4.9 TB/s per chip);
// everything else is trn2's (docs/reference.md, "Targets", lists these as assumptions).
// NeuronLink per chip: trn2's NeuronLink-v3 1.28 TB/s is AWS's Trainium2 figure; trn1's 384 and
// inf2's 192 GB/s (NeuronLink-v2) are assumptions, not checked against a source (see "Targets").
const std::array<TargetSpec, 4> specs = {{
    make("trn1", 2, 1, 32 * GiB, 2.8, 1.12, 1.4, 1.4, 820, 27, 384, true, 2),
    make("inf2", 2, 1, 32 * GiB, 2.8, 1.12, 1.4, 1.4, 820, 27, 192, true, 2),
    make("trn2", 8, 2, 96 * GiB, 2.4, 0.96, 1.2, 1.2, 2900, 23, 1280, false, 3),
    make("trn3", 8, 2, 144 * GiB, 2.4, 0.96, 1.2, 1.2, 4900, 23, 1280, false, 4),
}};
}  // namespace

const TargetSpec& target_spec(std::string_view name) {
  for (const TargetSpec& s : specs)
    if (s.name == name) return s;
  throw UserError("err_unknown_target", "", {},
                  fmt::format("unknown target \"{}\"; expected one of {}", name, fmt::join(target_names(), ", ")));
}

std::vector<std::string> target_names() {
  std::vector<std::string> out;
  for (const TargetSpec& s : specs) out.push_back(s.name);
  return out;
}

}  // namespace nki::sim
