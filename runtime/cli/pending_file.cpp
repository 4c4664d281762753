/** \file Whole-or-nothing output files (temporary + rename). */
#include "pending_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nki/error.h"

namespace nki::cli {

PendingFile::PendingFile(std::string path) : path_(std::move(path)) {
  tmp_ = fmt::format("{}.tmp{}", path_, ::getpid());
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw UserError("err_output_not_writable", "", {}, fmt::format("{}: cannot write ({})", path_, std::strerror(errno)));
  }
}

PendingFile::~PendingFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void PendingFile::commit(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw UserError("err_output_not_writable", "", {}, fmt::format("{}: write failed ({})", path_, std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd_) != 0 || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    fd_ = -1;
    ::unlink(tmp_.c_str());
    throw UserError("err_output_not_writable", "", {}, fmt::format("{}: cannot write ({})", path_, std::strerror(errno)));
  }
  fd_ = -1;
}

}  // namespace nki::cli
