/** \file Options no command knows, named as given with the closest known one (CLI11 reports them late or wrongly). */
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace nki::cli {

/**
 * The first argument that looks like an option (`-x`, `--name`, `--name=value`) but is none of
 * the options of the command it follows: "unknown option \"--inptu\"; did you mean --input?" (or,
 * with nothing close, the command's options listed), with the command's full name first.
 * nullopt when every option is known. Run before CLI11 parses, which would first report a
 * required option as missing.
 */
std::optional<std::string> unknown_option(const CLI::App& app, int argc, const char* const* argv);

}  // namespace nki::cli
