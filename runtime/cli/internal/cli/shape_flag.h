/** \file `--shape 16x16`: the shape flag of the commands that take shapes instead of files. */
#pragma once

#include <string>

#include "nki/shape.h"

namespace nki::cli {

/** Sizes joined by x; throws nki::UserError (err_invalid_shape) naming the flag's text. */
Shape parse_shape_flag(const std::string& text);

}  // namespace nki::cli
