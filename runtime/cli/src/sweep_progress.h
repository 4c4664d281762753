/** \file `nki bench`'s progress on stderr: a bar redrawn in place on a terminal, else a line per configuration. */
#pragma once

#include <cstddef>
#include <ostream>

#include "nki/sweep.h"

namespace nki::cli {

/** Shows a sweep's progress: give start() and done() as nki::SweepOptions::on_start and on_done. */
class SweepProgress {
 public:
  /** A bar when `err` is std::cerr on a terminal; plain lines otherwise. */
  SweepProgress(std::ostream& err, std::size_t total);
  void start(std::size_t i, const TuningConfig& c);
  void done(std::size_t i, const SweepRow& r);

 private:
  std::ostream& err_;
  std::size_t total_;
  bool bar_;
};

}  // namespace nki::cli
