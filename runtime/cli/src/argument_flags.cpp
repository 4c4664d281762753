/** \file --dtype, the choice between --input and --shape, and --input files as arguments, alike in every command. */
#include "cli/argument_flags.h"

#include <fmt/format.h>

#include "nki/error.h"

namespace nki::cli {

namespace {

/** The float dtypes, in the order of nki::all_dtypes. */
std::vector<std::string_view> float_dtype_names() {
  std::vector<std::string_view> names;
  for (DType t : all_dtypes)
    if (is_float(t)) names.push_back(dtype_name(t));
  return names;
}

}  // namespace

std::string dtype_flag_choices() { return fmt::format("{{{}}}", fmt::join(float_dtype_names(), ",")); }

DType parse_dtype_flag(const std::string& text, std::string_view flag) {
  // The short names, NKI's (bfloat16, float8_e4m3, ...) and NKI's spelled as Python does (nl.bfloat16).
  std::string_view name = text;
  for (std::string_view prefix : {"nki.language.", "nl."})
    if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
  if (const std::optional<DType> t = parse_dtype(name); t && is_float(*t)) return *t;
  throw UserError("err_unknown_dtype", "", {},
                  fmt::format("unknown {} \"{}\"; expected one of {}", flag, text, fmt::join(float_dtype_names(), ", ")));
}

Executor parse_executor_flag(const std::string& text, std::string_view named_as) {
  if (text == "halide") return Executor::halide;
  if (text == "reference") return Executor::reference;
  throw UserError("err_unknown_executor", "", {},
                  fmt::format("unknown {}\"{}\"; expected halide or reference", named_as, text));
}

SweepMetric parse_metric_flag(const std::string& text, std::string_view named_as) {
  if (text == "simulated") return SweepMetric::simulated;
  if (text == "host") return SweepMetric::host;
  throw UserError("err_invalid_metric", "", {},
                  fmt::format("unknown {}\"{}\"; expected simulated or host", named_as, text));
}

void check_input_or_shape(const std::string& kernel, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& shapes) {
  if (!inputs.empty() && !shapes.empty()) {
    throw UserError("err_conflicting_flags", kernel, {}, "give the arguments as --input files or as --shape, not both");
  }
}

DType argument_dtype(const NpyArray& file, DType float_dtype) {
  return is_integer(file.dtype) ? file.dtype : float_dtype;
}

Tensor argument_tensor(const NpyArray& file, DType float_dtype, const sim::Device& device) {
  if (is_integer(file.dtype)) return Tensor::from_values(device, file.shape, file.dtype, file.values);
  return Tensor::from_floats(file.shape, float_dtype, file.data, device);
}

}  // namespace nki::cli
