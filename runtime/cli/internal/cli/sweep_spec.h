/**
 * \file `--sweep "P=32,64,128;F=64..8192"`: the parameter values a tile sweep tries; and
 * `--config "P=64,F=2048"`: one value per parameter, the single configuration of a launch.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nki/sweep_axis.h"

namespace nki::cli {

/** What the grammar reads is what nki::sweep_configs takes: one swept parameter and its values. */
using nki::SweepAxis;

/**
 * Parses NAME=VALUES[;NAME=VALUES...]: VALUES is a comma-separated list of positive integers
 * and ranges LO..HI, meaning LO, 2 LO, 4 LO, ..., HI (HI must be LO times a power of two).
 * Names are letters, digits and '_', starting with a letter or '_'. Spaces around items are
 * allowed. A name or a value given twice is an error. Throws nki::UserError (err_invalid_sweep)
 * naming the spec, the offending part and what was expected.
 */
std::vector<SweepAxis> parse_sweep(std::string_view text);

/**
 * Parses NAME=VALUE[,NAME=VALUE...] (names as for parse_sweep, values positive integers,
 * spaces around items allowed) into (name, value) pairs in the order given; a name given twice
 * is an error. Throws nki::UserError (err_invalid_config) naming the text, the offending part
 * and what was expected. nki::checked_config checks them against a kernel's parameters.
 */
std::vector<std::pair<std::string, std::int64_t>> parse_config(std::string_view text);

/** Back to text: "P=32,64,128;F=64,128" (ranges written out). */
std::string sweep_str(const std::vector<SweepAxis>& axes);

}  // namespace nki::cli
