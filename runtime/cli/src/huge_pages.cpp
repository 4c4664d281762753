/** \file Restarting `nki` with glibc.malloc.hugetlb=1 (huge_pages.h). */
#include "cli/huge_pages.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace nki::cli {

std::optional<std::string> tunables_with_huge_pages(const char* current) {
  constexpr std::string_view kSetting = "glibc.malloc.hugetlb=1";
  if (current == nullptr || *current == '\0') return std::string(kSetting);
  // Tunables are name=value pairs joined by ':'.
  const std::string_view all(current);
  for (std::size_t at = 0; at <= all.size();) {
    const std::size_t end = std::min(all.find(':', at), all.size());
    if (all.substr(at, end - at).starts_with("glibc.malloc.hugetlb=")) return std::nullopt;
    at = end + 1;
  }
  return std::string(all) + ":" + std::string(kSetting);
}

void restart_with_huge_pages(char** argv) {
  const std::optional<std::string> tunables = tunables_with_huge_pages(std::getenv("GLIBC_TUNABLES"));
  if (!tunables || ::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // Not restarted: the command runs on with glibc's default; the variable stays set, so no child retries.
}

}  // namespace nki::cli
