/** \file User and internal error types. */
#include "nki/error.h"

#include <fmt/format.h>

namespace nki {

SourceLoc SourceLoc::from(const std::source_location& loc) {
  return SourceLoc{loc.file_name(), static_cast<int>(loc.line())};
}

std::string SourceLoc::str() const {
  if (file.empty()) return {};
  return fmt::format("{}:{}", file, line);
}

static std::string user_message(const std::string& name, const std::string& kernel,
                                const SourceLoc& loc, const std::string& detail) {
  std::string out;
  if (!kernel.empty()) out += kernel;
  if (!loc.file.empty()) out += (out.empty() ? "(" : " (") + loc.str() + ")";
  if (!out.empty()) out += ": ";
  if (!name.empty()) out += name + ": ";
  return out + detail;
}

UserError::UserError(std::string name, std::string kernel, SourceLoc loc, std::string detail)
    : std::runtime_error(user_message(name, kernel, loc, detail)),
      name_(std::move(name)),
      kernel_(std::move(kernel)),
      loc_(std::move(loc)),
      detail_(std::move(detail)) {}

InternalError::InternalError(const std::string& detail)
    : std::logic_error("internal error: " + detail), detail_(detail) {}

}  // namespace nki
