/** \file The text table, CSV and JSON of a sweep. */
#include "cli/sweep_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace nki::cli {

namespace {

/** A CSV field: quoted when it holds a comma, a quote or a newline. */
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

nlohmann::ordered_json config_json(const TuningConfig& config) {
  nlohmann::ordered_json c;
  for (const auto& [n, v] : config.values) c[n] = v;
  return c;
}

/** A matmul, attention...: some configuration does Tensor engine FLOPs, so the FLOP columns are shown. */
bool has_flops(const std::vector<SweepRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return !r.forbidden && r.flops > 0; });
}

/** "41.2%". */
std::string percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

}  // namespace

std::string sweep_table(const TunableKernel& k, const std::string& title, SweepMetric metric,
                        const std::vector<SweepRow>& rows) {
  std::size_t forbidden = 0;
  for (const SweepRow& r : rows) forbidden += r.forbidden ? 1 : 0;
  std::string text = fmt::format("{}: {} configurations, {} forbidden; sorted by {} latency\n", title, rows.size(),
                                 forbidden, sweep_metric_name(metric));
  std::string head = "     ";
  for (const TunableParam& p : k.params) head += fmt::format(" {:>7}", p.name);
  const bool flops = has_flops(rows);
  text += head + fmt::format(" {:>13} {:>12} {:>10}", "simulated_us", "host_us", "host_GBps");
  if (flops) text += fmt::format(" {:>11} {:>7} {:>12} {:>12}", "sim_TFLOPs", "hfu", "tensor_util", "host_GFLOPs");
  text += "\n";
  for (const SweepRow& r : rows) {
    std::string line = r.best ? "best " : "     ";
    for (const auto& [n, v] : r.config.values) line += fmt::format(" {:>7}", v);
    if (r.forbidden) {
      text += line + "  forbidden: " + *r.forbidden + "\n";
      continue;
    }
    if (r.host_measured) {
      line += fmt::format(" {:>13.3f} {:>12.1f} {:>10.3f}", r.simulated_us, r.host_us, r.host_gbps);
    } else {
      line += fmt::format(" {:>13.3f} {:>12} {:>10}", r.simulated_us, "-", "-");
    }
    if (flops) {
      line += fmt::format(" {:>11.3f} {:>7} {:>12} {:>12}", r.simulated_tflops, percent(r.hfu),
                          percent(r.tensor_utilization), r.host_measured ? fmt::format("{:.1f}", r.host_gflops) : "-");
    }
    text += line + "\n";
  }
  return text;
}

std::string sweep_csv(const TunableKernel& k, const std::vector<SweepRow>& rows) {
  const bool flops = has_flops(rows);
  std::string text;
  for (const auto& [n, v] : k.defaults().values) text += n + ",";
  text += "status,simulated_us,host_us,host_GBps,";
  if (flops) text += "simulated_TFLOPs,hfu,tensor_util,host_GFLOPs,";
  text += "best,reason\n";
  for (const SweepRow& r : rows) {
    for (const auto& [n, v] : r.config.values) text += fmt::format("{},", v);
    if (r.forbidden) {
      text += fmt::format("forbidden,,,,{},{}\n", flops ? ",,,," : "", csv_field(*r.forbidden));
      continue;
    }
    text += r.host_measured ? fmt::format("ok,{:.3f},{:.3f},{:.4f},", r.simulated_us, r.host_us, r.host_gbps)
                            : fmt::format("ok,{:.3f},,,", r.simulated_us);
    if (flops) {
      text += fmt::format("{:.4f},{:.4f},{:.4f},{},", r.simulated_tflops, r.hfu, r.tensor_utilization,
                          r.host_measured ? fmt::format("{:.3f}", r.host_gflops) : "");
    }
    text += fmt::format("{},\n", r.best ? 1 : 0);
  }
  return text;
}

std::string sweep_json(const std::string& kernel, const std::vector<TensorSpec>& args, const std::string& target,
                       SweepMetric metric, int iters, const std::vector<SweepRow>& rows) {
  nlohmann::ordered_json j;
  j["kernel"] = kernel;
  nlohmann::ordered_json ja = nlohmann::ordered_json::array();
  for (const TensorSpec& a : args) ja.push_back({{"shape", a.shape}, {"dtype", std::string(dtype_name(a.dtype))}});
  j["args"] = ja;
  j["target"] = target;
  j["metric"] = std::string(sweep_metric_name(metric));
  j["iters"] = iters;
  j["best"] = config_json(rows.front().config);
  const bool flops = has_flops(rows);
  nlohmann::ordered_json jc = nlohmann::ordered_json::array();
  for (const SweepRow& r : rows) {
    nlohmann::ordered_json o;
    o["config"] = config_json(r.config);
    o["status"] = r.forbidden ? "forbidden" : "ok";
    if (r.forbidden) {
      o["reason"] = *r.forbidden;
    } else {
      o["simulated_us"] = r.simulated_us;
      if (r.host_measured) {
        o["host_us"] = r.host_us;
        o["host_GBps"] = r.host_gbps;
      }
      if (flops) {
        o["flops"] = r.flops;
        o["simulated_TFLOPs"] = r.simulated_tflops;
        o["hfu"] = r.hfu;
        o["tensor_util"] = r.tensor_utilization;
        if (r.host_measured) o["host_GFLOPs"] = r.host_gflops;
      }
      o["best"] = r.best;
    }
    jc.push_back(o);
  }
  j["configs"] = jc;
  return j.dump(2) + "\n";
}

}  // namespace nki::cli
