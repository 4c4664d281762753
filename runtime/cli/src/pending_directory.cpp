/** \file Whole-or-nothing output directories (temporary + rename). */
#include "pending_directory.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>

#include "nki/error.h"

namespace nki::cli {

namespace fs = std::filesystem;

PendingDirectory::PendingDirectory(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw UserError("err_output_not_writable", "", {}, "the output directory path is empty");
  std::error_code ec;
  if (fs::exists(path_, ec)) {
    if (!fs::is_directory(path_, ec)) fail("it is a file; expected a directory that does not exist or is empty");
    if (!fs::is_empty(path_, ec)) fail("it is not empty; expected a directory that does not exist or is empty");
  }
  fs::path base = fs::path(path_).lexically_normal();
  if (!base.has_filename()) base = base.parent_path();  // "out/" names "out"
  const fs::path parent = base.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fail(fmt::format("the directory \"{}\" does not exist", parent.string()));
  }
  for (int n = 0; n < 1000; ++n) {
    const fs::path t = fmt::format("{}.tmp{}-{}", base.string(), ::getpid(), n);
    if (fs::create_directory(t, ec)) {
      tmp_ = t;
      return;
    }
    if (ec) fail(ec.message());
  }
  fail("no free temporary name beside it");
}

PendingDirectory::~PendingDirectory() {
  std::error_code ec;
  if (!tmp_.empty()) fs::remove_all(tmp_, ec);
}

void PendingDirectory::fail(const std::string& why) const {
  throw UserError("err_output_not_writable", "", {}, fmt::format("{}: cannot write: {}", path_, why));
}

fs::path PendingDirectory::prepared(const std::string& name) {
  const fs::path p = tmp_ / name;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) fail(ec.message());
  return p;
}

void PendingDirectory::write(const std::string& name, const std::string& bytes) {
  std::ofstream f(prepared(name), std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.flush();
  if (!f) fail(fmt::format("cannot write {} (disk full?)", name));
}

void PendingDirectory::copy(const fs::path& from, const std::string& name) {
  std::error_code ec;
  fs::copy_file(from, prepared(name), fs::copy_options::overwrite_existing, ec);
  if (ec) fail(fmt::format("cannot copy {}: {}", from.filename().string(), ec.message()));
}

void PendingDirectory::commit() {
  std::error_code ec;
  fs::rename(tmp_, path_, ec);  // replaces an empty directory
  if (ec) fail(ec.message());
  tmp_.clear();
}

}  // namespace nki::cli
