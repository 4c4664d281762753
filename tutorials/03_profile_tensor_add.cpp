/**
 * \file Tutorial 3: how would the multi-core tensor add run on a NeuronCore? Profile it.
 *
 * nki::profile traces the kernel for the argument shapes, checks that an instance's SBUF
 * and PSUM fit, places the instances on the chip's cores exactly as a launch would, and
 * schedules every instruction on its engine queue with the cost model (docs/reference.md,
 * "Cost rules"). It reads no data: the same call estimates kernels far too large to run here.
 *
 * The report gives the estimated device latency, each core's engine busy time and
 * utilization, DMA bytes and bandwidth, and the per-instruction timeline the --trace file
 * of `nki profile` holds (open it in Perfetto). Here we print the two cores' timelines.
 */
#include <random>

#include "nki/kernels.h"
#include "nki/nki.h"
#include "tutorial_check.h"

namespace nl = nki::language;

int main() {
  const std::int64_t P = 512, F = 2048;
  const std::int64_t grid_x = P / (128 * 2), grid_y = F / 512;
  const nki::Kernel& tensor_add = nki::kernels::tensor_add();
  auto launch = tensor_add[nl::spmd_dim(grid_x, nl::nc(2)), grid_y];

  // 1. The estimate: shapes and dtypes are all it needs.
  const nki::ProfileReport r = nki::profile(launch, {{{P, F}, nl::bfloat16}, {{P, F}, nl::bfloat16}}, "trn2");
  fmt::print("{}", nki::sim::profile_text(r));

  // 2. Each core's timeline: one line per instruction, in start order. Each instance loads two
  //    [128, 512] tiles on two DMA queues, adds them on the Vector engine, stores on a third queue;
  //    instances overlap because each takes the DMA queues that are free.
  for (const nki::sim::CoreProfile& core : r.cores) {
    fmt::print("\nNC{} timeline ({} instances):\n", core.nc, core.instances.size());
    std::vector<nki::sim::Event> events = core.events;
    std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.start_us < b.start_us; });
    for (const nki::sim::Event& e : events) {
      const std::string queue = e.queue < 4 ? nki::sim::engine_name(static_cast<nki::sim::Engine>(e.queue))
                                            : fmt::format("DMA{}", e.queue - 4);
      const auto& pid = core.instances[static_cast<std::size_t>(e.instance)];
      fmt::print("  {:>9.3f} .. {:>9.3f} us  {:<7} {:<6} [{}]  {}\n", e.start_us, e.end_us, queue, r.ops[e.op],
                 fmt::join(pid, ","), r.op_locs[e.op].str());
    }
  }

  // 3. The launch itself still computes the right answer.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> a_host(P * F), b_host(P * F);
  for (float& v : a_host) v = dist(rng);
  for (float& v : b_host) v = dist(rng);
  nki::Tensor a = nki::Tensor::from_floats({P, F}, nl::bfloat16, a_host);
  nki::Tensor b = nki::Tensor::from_floats({P, F}, nl::bfloat16, b_host);
  nki::Tensor c = launch(a, b);
  std::vector<float> a_bf = a.to_floats(), b_bf = b.to_floats(), expected(P * F);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = a_bf[i] + b_bf[i];
  return tutorial::check_allclose(c.to_floats(), expected, 1e-4, 1e-2);
}
