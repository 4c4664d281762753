/** \file The progress bar and progress lines of `nki bench`. */
#include "sweep_progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <string>

namespace nki::cli {

namespace {

constexpr std::size_t kBarWidth = 30;

}  // namespace

SweepProgress::SweepProgress(std::ostream& err, std::size_t total)
    : err_(err), total_(total), bar_(&err == &std::cerr && ::isatty(STDERR_FILENO) == 1) {}

void SweepProgress::start(std::size_t i, const TuningConfig& c) {
  if (!bar_) return;
  const std::size_t filled = kBarWidth * i / total_;
  err_ << fmt::format("\r\x1b[2K[{}{}] {}/{} {}", std::string(filled, '#'), std::string(kBarWidth - filled, ' '), i,
                      total_, c.str())
       << std::flush;
}

void SweepProgress::done(std::size_t i, const SweepRow& r) {
  if (bar_) {
    if (i + 1 == total_) err_ << fmt::format("\r\x1b[2K[{}] {}/{}\n", std::string(kBarWidth, '#'), total_, total_) << std::flush;
    return;
  }
  std::string what = r.forbidden ? "forbidden" : fmt::format("simulated {:.3f} us", r.simulated_us);
  if (r.host_measured) what += fmt::format(", host {:.1f} us ({:.3f} GB/s)", r.host_us, r.host_gbps);
  err_ << fmt::format("nki bench: {}/{} {}: {}\n", i + 1, total_, r.config.str(), what);
}

}  // namespace nki::cli
