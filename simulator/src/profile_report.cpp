/** \file A profile as text, as one JSON object, and as a Chrome Trace Event file. */
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "nki/simulator/cost_model.h"

namespace nki::sim {

namespace {

std::string queue_name(int queue) {
  return queue < 4 ? engine_name(static_cast<Engine>(queue)) : fmt::format("DMA{}", queue - 4);
}

/** Rounded to 1e-6 us (a picosecond) so the JSON is stable across platforms. */
double us(double v) { return std::round(v * 1e6) / 1e6; }

}  // namespace

std::string profile_json(const ProfileReport& r) {
  nlohmann::ordered_json j;
  j["kernel"] = r.kernel;
  j["target"] = r.target;
  j["grid"] = r.grid;
  if (r.ranks > 0) j["ranks"] = r.ranks;
  j["latency_us"] = us(r.latency_us);
  j["flops"] = r.flops;
  j["hfu"] = std::round(r.hfu * 1e6) / 1e6;
  j["dma_bytes"] = r.dma_bytes;
  j["dma_gbps"] = std::round(r.dma_gbps * 1e3) / 1e3;
  j["instructions"] = r.instructions;
  nlohmann::ordered_json cores = nlohmann::ordered_json::array();
  for (const CoreProfile& c : r.cores) {
    nlohmann::ordered_json cj;
    if (r.ranks > 0) cj["rank"] = c.rank;
    cj["nc"] = c.nc;
    cj["latency_us"] = us(c.latency_us);
    cj["instances"] = c.instances.size();
    cj["dma_bytes"] = c.dma_bytes;
    nlohmann::ordered_json engines = nlohmann::ordered_json::object();
    for (int e = 0; e < kEngines; ++e) {
      const EngineUse& u = c.engines[static_cast<std::size_t>(e)];
      engines[engine_name(static_cast<Engine>(e))] = {{"busy_us", us(u.busy_us)},
                                                       {"utilization", std::round(u.utilization * 1e6) / 1e6},
                                                       {"instructions", u.instructions}};
    }
    cj["engines"] = engines;
    cores.push_back(cj);
  }
  j["cores"] = cores;
  return j.dump(2) + "\n";
}

std::string chrome_trace_json(const ProfileReport& r) {
  // Written piecewise: a large kernel has many events.
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  auto emit = [&](const nlohmann::ordered_json& e) {
    if (!first) out += ",\n";
    first = false;
    out += e.dump();
  };
  for (const CoreProfile& c : r.cores) {
    // A world launch's ranks are one process each (their cores repeat from chip to chip).
    const int pid = r.ranks > 0 ? c.rank : c.nc;
    const std::string pname = r.ranks > 0 ? fmt::format("rank {} (NC{})", c.rank, c.nc) : fmt::format("NC{}", c.nc);
    emit({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", pname}}}});
    std::vector<bool> used(64, false);
    for (const Event& e : c.events) used.at(static_cast<std::size_t>(e.queue)) = true;
    for (int q = 0; q < 64; ++q) {
      if (q >= 4 && !used[static_cast<std::size_t>(q)]) continue;
      if (q >= 4 + 60) break;
      emit({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", q}, {"args", {{"name", queue_name(q)}}}});
    }
    for (const Event& e : c.events) {
      const Engine engine = e.queue < 4 ? static_cast<Engine>(e.queue) : Engine::dma;
      emit({{"name", r.ops[e.op]},
            {"cat", engine_name(engine)},
            {"ph", "X"},
            {"pid", pid},
            {"tid", e.queue},
            {"ts", us(e.start_us)},
            {"dur", us(e.end_us - e.start_us)},
            {"args",
             {{"op", r.ops[e.op]},
              {"source", r.op_locs[e.op].str()},
              {"instance", c.instances[static_cast<std::size_t>(e.instance)]}}}});
    }
  }
  out += "\n]}\n";
  return out;
}

std::string profile_text(const ProfileReport& r) {
  std::string s;
  s += fmt::format("kernel {} on {}, grid {}\n", r.kernel, r.target, r.grid.empty() ? "(none)" : r.grid);
  s += fmt::format("estimated device latency: {:.3f} us\n", r.latency_us);
  s += fmt::format("FLOPs: {} (hardware FLOP utilization {:.1f}%)\n", r.flops, r.hfu * 100.0);
  s += fmt::format("DMA: {} bytes, achieved {:.1f} GB/s\n", r.dma_bytes, r.dma_gbps);
  s += fmt::format("instructions: {}\n", r.instructions);
  for (const CoreProfile& c : r.cores) {
    const std::string who = r.ranks > 0 ? fmt::format("rank {} (NC{})", c.rank, c.nc) : fmt::format("NC{}", c.nc);
    s += fmt::format("{}: {:.3f} us, {} instances, {} DMA bytes\n", who, c.latency_us, c.instances.size(), c.dma_bytes);
    s += fmt::format("  {:<8} {:>12} {:>12} {:>13}\n", "engine", "busy_us", "utilization", "instructions");
    for (int e = 0; e < kEngines; ++e) {
      const EngineUse& u = c.engines[static_cast<std::size_t>(e)];
      s += fmt::format("  {:<8} {:>12.3f} {:>11.1f}% {:>13}\n", engine_name(static_cast<Engine>(e)), u.busy_us,
                       u.utilization * 100.0, u.instructions);
    }
  }
  return s;
}

}  // namespace nki::sim
