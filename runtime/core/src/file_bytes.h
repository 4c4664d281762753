/** \file A whole file's bytes to parse: a regular file mapped read-only (no copy), anything else read. */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nki {

/**
 * The bytes of the file at a path, for as long as this lives. A regular file is mapped (its
 * pages come from the page cache, faulted in ahead: reading a 128 MiB .npy into a string took
 * seconds on a VM, most of it in page faults of fresh memory); a pipe (`--input <(...)`) or a
 * file that cannot be mapped is read to its end.
 */
class FileBytes {
 public:
  explicit FileBytes(const std::string& path);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  bool opened() const { return opened_; }
  /** Whether every byte was read (false after a read error). */
  bool complete() const { return complete_; }
  std::string_view bytes() const { return map_ != nullptr ? std::string_view(static_cast<const char*>(map_), size_) : read_; }

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::string read_;
  bool opened_ = false, complete_ = false;
};

}  // namespace nki
