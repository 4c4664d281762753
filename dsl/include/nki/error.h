/** \file The two error types: mistakes of the user (named as NKI names them) and bugs of ours. */
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace nki {

/** Where in the user's source a DSL call was made (project-relative file, line). */
struct SourceLoc {
  std::string file;
  int line = 0;

  static SourceLoc from(const std::source_location& loc);
  std::string str() const;  ///< "file:line", or "" when unknown
};

/**
 * A kernel or input the user got wrong. what() reads
 * `KERNEL (FILE:LINE): ERR_NAME: detail`, omitting the parts that are unknown.
 */
class UserError : public std::runtime_error {
 public:
  UserError(std::string name, std::string kernel, SourceLoc loc, std::string detail);

  const std::string& name() const { return name_; }
  const std::string& kernel() const { return kernel_; }
  const SourceLoc& location() const { return loc_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string name_, kernel_;
  SourceLoc loc_;
  std::string detail_;
};

/** A broken invariant inside nki-cpp itself: never the user's fault. */
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& detail);
  /** The message without the "internal error: " prefix (for adding context). */
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

}  // namespace nki
