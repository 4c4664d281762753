/** \file Error messages as the single line the `nki` command (and the Python module) promise. */
#pragma once

#include <string>
#include <string_view>

namespace nki::cli {

/** `what` on one line: each newline becomes "; ", trailing spaces and semicolons go. */
std::string one_line(std::string_view what);

}  // namespace nki::cli
