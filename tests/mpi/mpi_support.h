/** \file Helpers of the MPI suite: a directory every rank shares, and values from every rank. */
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nki/communicator.h"
#include "test_support.h"

namespace mpi_test {

/** Every rank's `value`, in rank order. */
inline std::vector<std::string> from_every_rank(const std::string& value) {
  return nki::communicator().all_gather_text(value);
}

/** A fresh directory rank 0 made and every rank uses; rank 0 removes it at the end. */
class SharedDir {
 public:
  SharedDir() {
    if (nki::communicator().rank() == 0) mine_.emplace();
    path_ = from_every_rank(mine_ ? mine_->path().string() : std::string()).front();
  }
  ~SharedDir() { (void)from_every_rank(""); }  // nobody is still inside when rank 0 removes it
  const std::filesystem::path& path() const { return path_; }

 private:
  std::optional<test::TempDir> mine_;
  std::filesystem::path path_;
};

/** A fresh compile cache every rank of the host shares, for the object's life; nothing loaded in memory. */
class SharedCache {
 public:
  SharedCache() {
    nki::cache::set_directory(dir_.path() / "cache");
    nki::cache::forget_loaded();
  }
  ~SharedCache() {
    nki::cache::set_directory(std::nullopt);
    nki::cache::forget_loaded();
  }

 private:
  SharedDir dir_;
};

}  // namespace mpi_test
