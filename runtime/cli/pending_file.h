/** \file An output file that appears whole or not at all. */
#pragma once

#include <string>

namespace nki::cli {

/**
 * Opens a temporary file beside `path` at once (so an unwritable path fails before
 * any work), and renames it into place on commit(). Without commit() the temporary
 * is removed and `path` is untouched.
 */
class PendingFile {
 public:
  explicit PendingFile(std::string path);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  void commit(const std::string& bytes);
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
  int fd_ = -1;
};

}  // namespace nki::cli
