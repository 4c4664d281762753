/** \file Unknown options: found before parsing, named as given, with the closest known option. */
#include "unknown_option.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace nki::cli {

namespace {

/** Levenshtein distance: how many one-character edits turn `a` into `b`. */
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

/** Every spelling of the command's options: "--input", "-h", ... */
std::vector<std::string> option_spellings(const CLI::App& cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
    for (const std::string& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

/** An argument CLI11 would take for an option: "-x...", "--x..." (a negative number is a value). */
bool looks_like_option(std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return false;
  const char next = arg[1] == '-' ? (arg.size() > 2 ? arg[2] : '\0') : arg[1];
  return std::isalpha(static_cast<unsigned char>(next)) != 0;
}

/** The known option `given` most likely meant: the one long name it begins (-i, --out), else one within two edits. */
std::optional<std::string> closest(std::string_view given, const std::vector<std::string>& known) {
  const std::string_view bare = given.substr(given.find_first_not_of('-'));
  std::vector<std::string> begun;
  for (const std::string& k : known)
    if (k.starts_with("--") && std::string_view(k).substr(2).starts_with(bare)) begun.push_back(k);
  if (begun.size() == 1) return begun.front();
  std::optional<std::string> best;
  std::size_t best_distance = 3;
  for (const std::string& k : known) {
    if (!k.starts_with("--")) continue;
    const std::size_t d = edit_distance(bare, std::string_view(k).substr(2));
    if (d < best_distance) best_distance = d, best = k;
  }
  return best;
}

}  // namespace

std::optional<std::string> unknown_option(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* cmd = &app;
  std::string name = app.get_name();
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return std::nullopt;  // what follows are values
    if (!looks_like_option(arg)) {
      // A subcommand's name moves on to its own options; any other word is a value or a positional.
      for (const CLI::App* sub : cmd->get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == arg) {
          cmd = sub;
          name += " " + sub->get_name();
          break;
        }
      }
      continue;
    }
    const std::string_view spelled = arg.substr(0, arg.find('='));
    const std::vector<std::string> known = option_spellings(*cmd);
    if (std::find(known.begin(), known.end(), spelled) != known.end()) continue;
    if (cmd == &app) return std::nullopt;  // before any command: the caller names the commands
    if (cmd->get_allow_extras()) continue;  // the command reports what it does not take itself
    std::vector<std::string> longs;
    for (const std::string& k : known)
      if (k.starts_with("--")) longs.push_back(k);
    if (const std::optional<std::string> near = closest(spelled, known))
      return fmt::format("{}: unknown option \"{}\"; did you mean {}? (see {} --help)", name, spelled, *near, name);
    return fmt::format("{}: unknown option \"{}\"; the options are {}", name, spelled, fmt::join(longs, ", "));
  }
  return std::nullopt;
}

}  // namespace nki::cli
