/** \file The flags that give a kernel's arguments: --input files or --shape, and --dtype of the float ones. */
#pragma once

#include <string>
#include <vector>

#include "nki/dtype.h"

namespace nki::cli {

/** --help's list of the --dtype names, e.g. "{fp32,bf16,fp16,fp8_e4m3,fp8_e5m2}". */
std::string dtype_flag_choices();

/**
 * The float dtype `text` names (fp32, bf16, fp16, fp8_e4m3, fp8_e5m2): what float arguments
 * are rounded to. Integer and bool arguments come from .npy files with their own dtype, so
 * --dtype names no integer dtype. Throws nki::UserError (err_unknown_dtype) naming the value
 * and the choices.
 */
DType parse_dtype_flag(const std::string& text);

/**
 * The arguments come as --input files or as --shape sizes: throws nki::UserError
 * (err_conflicting_flags, in `kernel`'s name) when both are given.
 */
void check_input_or_shape(const std::string& kernel, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& shapes);

}  // namespace nki::cli
