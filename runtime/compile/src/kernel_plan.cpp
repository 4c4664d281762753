/** \file KernelPlan <-> JSON (the `plan.json` of a cache entry). */
#include "kernel_plan.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <utility>

namespace nki {

namespace {
const char* kind_name(StepPlan::Kind k) {
  switch (k) {
    case StepPlan::Kind::call: return "call";
    case StepPlan::Kind::loop: return "loop";
    case StepPlan::Kind::loop_end: return "loop_end";
    case StepPlan::Kind::fill: return "fill";
    case StepPlan::Kind::reg: return "register";
    case StepPlan::Kind::print: return "print";
    case StepPlan::Kind::collective: return "collective";
    case StepPlan::Kind::scatter: return "scatter";
  }
  return "?";
}
StepPlan::Kind kind_of(const std::string& s) {
  if (s == "call") return StepPlan::Kind::call;
  if (s == "loop") return StepPlan::Kind::loop;
  if (s == "loop_end") return StepPlan::Kind::loop_end;
  if (s == "fill") return StepPlan::Kind::fill;
  if (s == "register") return StepPlan::Kind::reg;
  if (s == "print") return StepPlan::Kind::print;
  if (s == "collective") return StepPlan::Kind::collective;
  if (s == "scatter") return StepPlan::Kind::scatter;
  throw std::runtime_error("unknown step kind '" + s + "'");
}

/**
 * `v` as a T when it is a JSON integer T holds. nlohmann's get<T>() casts whatever number it
 * finds (a fraction, or an integer too long for 64 bits, read as a double), which a damaged
 * plan must not reach: out of range, the cast is undefined.
 */
template <class T>
T integer(const nlohmann::json& v, const char* field) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (std::in_range<T>(u)) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (std::in_range<T>(i)) return static_cast<T>(i);
  }
  throw std::runtime_error(fmt::format("malformed plan: {} is {}, not an integer of {} bits", field, v.dump(),
                                       sizeof(T) * 8));
}

template <class T>
std::vector<T> integers(const nlohmann::json& v, const char* field) {
  if (!v.is_array()) throw std::runtime_error(fmt::format("malformed plan: {} is {}, not an array", field, v.dump()));
  std::vector<T> out;
  for (const nlohmann::json& x : v) out.push_back(integer<T>(x, field));
  return out;
}
}  // namespace

std::string plan_outline(const KernelPlan& plan) {
  std::string out;
  std::string indent;
  for (const StepPlan& s : plan.steps) {
    switch (s.kind) {
      case StepPlan::Kind::loop:
        out += fmt::format("{}for loop{} = {} step {}, {}:\n", indent, s.loop, s.first, s.stride,
                           s.trip < 0 ? std::string("every iteration")
                                      : fmt::format("{} time{}", s.trip, s.trip == 1 ? "" : "s"));
        indent += "  ";
        break;
      case StepPlan::Kind::loop_end:
        if (indent.size() >= 2) indent.resize(indent.size() - 2);
        break;
      case StepPlan::Kind::fill: out += fmt::format("{}fill tensor{}\n", indent, s.tensor); break;
      case StepPlan::Kind::print: out += fmt::format("{}device_print op{} scratch{}\n", indent, s.op, s.scratch); break;
      case StepPlan::Kind::collective: out += fmt::format("{}collective op{}\n", indent, s.op); break;
      case StepPlan::Kind::scatter:
        out += fmt::format("{}scatter op{}{}\n", indent, s.op,
                           s.shift_loop >= 0 ? fmt::format("  (loop{} + {})", s.shift_loop, s.shift) : "");
        break;
      case StepPlan::Kind::reg:
        out += fmt::format("{}register op{}{}\n", indent, s.op,
                           s.shift_loop >= 0 ? fmt::format("  (loop{} + {})", s.shift_loop, s.shift) : "");
        break;
      case StepPlan::Kind::call:
        out += fmt::format("{}{} -> {}{}{}\n", indent, s.function,
                           s.store >= 0 ? fmt::format("store{}", s.store) : fmt::format("scratch{}", s.scratch),
                           s.streaming ? " (streaming)" : "",
                           s.shift_loop >= 0 ? fmt::format("  (loop{} + {})", s.shift_loop, s.shift) : "");
        break;
    }
  }
  return out;
}

std::string plan_to_json(const KernelPlan& plan) {
  nlohmann::ordered_json j;
  j["batchable"] = plan.batchable;
  j["pid_base"] = plan.pid_base;
  j["rank"] = plan.rank;
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const StepPlan& s : plan.steps) {
    nlohmann::ordered_json x;
    x["kind"] = kind_name(s.kind);
    x["function"] = s.function;
    x["inputs"] = s.inputs;
    x["store"] = s.store;
    x["scratch"] = s.scratch;
    nlohmann::ordered_json dims = nlohmann::ordered_json::array();
    for (const PlanDim& d : s.out_dims) dims.push_back({d.extent, d.stride});
    x["out_dims"] = dims;
    x["streaming"] = s.streaming;
    x["shift_loop"] = s.shift_loop;
    x["shift"] = s.shift;
    x["loop"] = s.loop;
    x["end"] = s.end;
    x["first"] = s.first;
    x["stride"] = s.stride;
    x["trip"] = s.trip;
    x["tensor"] = s.tensor;
    x["op"] = s.op;
    steps.push_back(x);
  }
  j["steps"] = steps;
  nlohmann::ordered_json scratch = nlohmann::ordered_json::array();
  for (const ScratchPlan& s : plan.scratch) scratch.push_back({{"shape", s.shape}, {"code", s.type_code}, {"bits", s.type_bits}});
  j["scratch"] = scratch;
  return j.dump() + "\n";
}

KernelPlan plan_from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    KernelPlan plan;
    plan.batchable = j.at("batchable").get<bool>();
    plan.pid_base = integers<std::int64_t>(j.at("pid_base"), "pid_base");
    plan.rank = j.contains("rank") ? integer<int>(j.at("rank"), "rank") : -1;
    for (const auto& x : j.at("steps")) {
      StepPlan s;
      s.kind = kind_of(x.at("kind").get<std::string>());
      s.function = x.at("function").get<std::string>();
      s.inputs = integers<int>(x.at("inputs"), "inputs");
      s.store = integer<int>(x.at("store"), "store");
      s.scratch = integer<int>(x.at("scratch"), "scratch");
      for (const auto& d : x.at("out_dims"))
        s.out_dims.push_back({integer<std::int32_t>(d.at(0), "out_dims"), integer<std::int32_t>(d.at(1), "out_dims")});
      s.streaming = x.contains("streaming") && x.at("streaming").get<bool>();
      s.shift_loop = integer<int>(x.at("shift_loop"), "shift_loop");
      s.shift = integer<int>(x.at("shift"), "shift");
      s.loop = integer<int>(x.at("loop"), "loop");
      s.end = integer<std::size_t>(x.at("end"), "end");
      s.first = integer<std::int64_t>(x.at("first"), "first");
      s.stride = integer<std::int64_t>(x.at("stride"), "stride");
      s.trip = integer<std::int64_t>(x.at("trip"), "trip");
      s.tensor = integer<int>(x.at("tensor"), "tensor");
      s.op = x.contains("op") ? integer<int>(x.at("op"), "op") : -1;
      plan.steps.push_back(std::move(s));
    }
    for (const auto& x : j.at("scratch")) {
      plan.scratch.push_back({integers<std::int64_t>(x.at("shape"), "shape"), integer<int>(x.at("code"), "code"),
                              integer<int>(x.at("bits"), "bits")});
    }
    return plan;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed plan: ") + e.what());
  }
}

}  // namespace nki
