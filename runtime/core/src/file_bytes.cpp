/** \file FileBytes: mmap for regular files, read(2) for the rest. */
#include "file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace nki {

FileBytes::FileBytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  opened_ = true;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p != MAP_FAILED) {
      map_ = p;
      size_ = size;
      complete_ = true;
      ::close(fd);
      return;
    }
  }
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      read_.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      complete_ = true;
      break;
    } else if (errno != EINTR) {
      break;
    }
  }
  ::close(fd);
}

FileBytes::~FileBytes() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

}  // namespace nki
