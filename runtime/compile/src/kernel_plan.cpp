/** \file KernelPlan <-> JSON (the `plan.json` of a cache entry). */
#include "kernel_plan.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace nki {

namespace {
const char* kind_name(StepPlan::Kind k) {
  switch (k) {
    case StepPlan::Kind::call: return "call";
    case StepPlan::Kind::loop: return "loop";
    case StepPlan::Kind::loop_end: return "loop_end";
    case StepPlan::Kind::fill: return "fill";
  }
  return "?";
}
StepPlan::Kind kind_of(const std::string& s) {
  if (s == "call") return StepPlan::Kind::call;
  if (s == "loop") return StepPlan::Kind::loop;
  if (s == "loop_end") return StepPlan::Kind::loop_end;
  if (s == "fill") return StepPlan::Kind::fill;
  throw std::runtime_error("unknown step kind '" + s + "'");
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
      case StepPlan::Kind::call:
        out += fmt::format("{}{} -> {}{}\n", indent, s.function,
                           s.store >= 0 ? fmt::format("store{}", s.store) : fmt::format("scratch{}", s.scratch),
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
    x["shift_loop"] = s.shift_loop;
    x["shift"] = s.shift;
    x["loop"] = s.loop;
    x["end"] = s.end;
    x["first"] = s.first;
    x["stride"] = s.stride;
    x["trip"] = s.trip;
    x["tensor"] = s.tensor;
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
    plan.pid_base = j.at("pid_base").get<std::vector<std::int64_t>>();
    for (const auto& x : j.at("steps")) {
      StepPlan s;
      s.kind = kind_of(x.at("kind").get<std::string>());
      s.function = x.at("function").get<std::string>();
      s.inputs = x.at("inputs").get<std::vector<int>>();
      s.store = x.at("store").get<int>();
      s.scratch = x.at("scratch").get<int>();
      for (const auto& d : x.at("out_dims")) s.out_dims.push_back({d.at(0).get<std::int32_t>(), d.at(1).get<std::int32_t>()});
      s.shift_loop = x.at("shift_loop").get<int>();
      s.shift = x.at("shift").get<int>();
      s.loop = x.at("loop").get<int>();
      s.end = x.at("end").get<std::size_t>();
      s.first = x.at("first").get<std::int64_t>();
      s.stride = x.at("stride").get<std::int64_t>();
      s.trip = x.at("trip").get<std::int64_t>();
      s.tensor = x.at("tensor").get<int>();
      plan.steps.push_back(std::move(s));
    }
    for (const auto& x : j.at("scratch"))
      plan.scratch.push_back({x.at("shape").get<Shape>(), x.at("code").get<int>(), x.at("bits").get<int>()});
    return plan;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed plan: ") + e.what());
  }
}

}  // namespace nki
