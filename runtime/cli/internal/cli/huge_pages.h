/** \file The `nki` command's large blocks on transparent huge pages (glibc's malloc tunable). */
#pragma once

#include <optional>
#include <string>

namespace nki::cli {

/**
 * GLIBC_TUNABLES as `current` has it plus glibc.malloc.hugetlb=1 (glibc's malloc then asks the
 * kernel, madvise(MADV_HUGEPAGE), to back the blocks it maps with transparent huge pages), or
 * nullopt when `current` already sets glibc.malloc.hugetlb (the user's choice stands).
 * `current` is null when the variable is unset.
 */
std::optional<std::string> tunables_with_huge_pages(const char* current);

/**
 * Starts the process again (same arguments, same pid) with GLIBC_TUNABLES from
 * tunables_with_huge_pages, which glibc reads only as a process starts; returns when the
 * variable already says, or when the restart fails (the command then runs as it is). Why:
 * `nki run` on two 128 MiB .npy inputs spent most of its 10 s in page faults of fresh memory,
 * one per 4 KiB page on this VM (bench/README.md, "Large inputs").
 */
void restart_with_huge_pages(char** argv);

}  // namespace nki::cli
