/** \file The flags that give a kernel's arguments: --input files or --shape, and --dtype of the float ones. */
#pragma once

#include <string>
#include <vector>

#include "nki/dtype.h"
#include "nki/kernel.h"
#include "nki/npy.h"
#include "nki/simulator/device.h"
#include "nki/sweep.h"
#include "nki/tensor.h"

namespace nki::cli {

/** --help's list of the --dtype names, e.g. "{fp32,bf16,fp16,fp8_e4m3,fp8_e5m2,tf32,fp8_e4m3fn,fp8_e8m0fnu}". */
std::string dtype_flag_choices();

/**
 * The float dtype `text` names (fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, tf32, fp8_e4m3fn, fp8_e8m0fnu, or NKI's
 * names for them, bare or with the nl. prefix: bfloat16, nl.float32, ...): what float arguments
 * are rounded to. Integer and bool arguments come from .npy files with their own dtype, so
 * --dtype names no integer dtype. Throws nki::UserError (err_unknown_dtype) naming the value
 * and the choices, as `flag` ("--dtype", or the Python module's "dtype=") gave it.
 */
DType parse_dtype_flag(const std::string& text, std::string_view flag = "--dtype");

/**
 * The executor `text` names, halide or reference; throws nki::UserError err_unknown_executor as
 * "unknown {named_as}\"{text}\"; expected halide or reference" (`named_as` "--executor " for
 * the command, "executor=" for Python).
 */
Executor parse_executor_flag(const std::string& text, std::string_view named_as = "--executor ");

/** The sweep metric `text` names, simulated or host; nki::UserError err_invalid_metric otherwise, worded as parse_executor_flag's. */
SweepMetric parse_metric_flag(const std::string& text, std::string_view named_as = "--metric ");

/**
 * The arguments come as --input files or as --shape sizes: throws nki::UserError
 * (err_conflicting_flags, in `kernel`'s name) when both are given.
 */
void check_input_or_shape(const std::string& kernel, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& shapes);

/** The dtype an --input file is to the kernel: an integer or bool file keeps its own, a float one takes --dtype. */
DType argument_dtype(const NpyArray& file, DType float_dtype);

/** An --input file as a tensor on `device`: an integer or bool file exact, a float one rounded to --dtype. */
Tensor argument_tensor(const NpyArray& file, DType float_dtype, const sim::Device& device);

}  // namespace nki::cli
