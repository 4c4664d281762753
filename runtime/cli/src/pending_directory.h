/** \file An output directory that appears whole or not at all. */
#pragma once

#include <filesystem>
#include <string>

namespace nki::cli {

/**
 * Creates a temporary directory beside `path` at once (so an unwritable place fails before
 * any work), takes files with write() and copy(), and renames the temporary into place on
 * commit(). `path` must not exist or be an empty directory (never overwrite a user's files).
 * Without commit() the temporary is removed and `path` is untouched.
 */
class PendingDirectory {
 public:
  explicit PendingDirectory(std::string path);
  ~PendingDirectory();
  PendingDirectory(const PendingDirectory&) = delete;
  PendingDirectory& operator=(const PendingDirectory&) = delete;

  /** Writes `bytes` to `name` (a relative path; parent directories are created). */
  void write(const std::string& name, const std::string& bytes);
  /** Copies the file `from` to `name`. */
  void copy(const std::filesystem::path& from, const std::string& name);
  /** Renames the temporary directory into place. */
  void commit();

 private:
  [[noreturn]] void fail(const std::string& why) const;
  std::filesystem::path prepared(const std::string& name);
  std::string path_;
  std::filesystem::path tmp_;
};

}  // namespace nki::cli
