/** \file An output file that appears whole or not at all. */
#pragma once

#include <string>

namespace nki::cli {

/**
 * Opens a temporary file beside `path` at once (so an unwritable path fails before
 * any work), takes the bytes with write(), and renames the temporary into place on
 * commit(). Without commit() the temporary is removed and `path` is untouched, so
 * several outputs can all be written before any of them appears.
 */
class PendingFile {
 public:
  explicit PendingFile(std::string path);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  /** Writes all of `bytes` to the temporary file and closes it. */
  void write(const std::string& bytes);
  /** Renames the written temporary into place. */
  void commit();
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const std::string& why);
  std::string path_, tmp_;
  int fd_ = -1;
  bool written_ = false;
};

/**
 * Whether two paths name the same file (after ".", ".." and symlinks), whether or not it exists
 * yet: two outputs of one command must not. Paths that cannot be resolved compare as written.
 */
bool same_file(const std::string& a, const std::string& b);

}  // namespace nki::cli
