/** \file `nki bench --plot FILE.png`: a sweep's figures against tile size, drawn by gnuplot. */
#pragma once

#include <string>
#include <vector>

#include "nki/sweep.h"

namespace nki::cli {

/** Throws nki::UserError (err_gnuplot_missing) when no gnuplot is on PATH: checked before a sweep starts. */
void require_gnuplot();

/**
 * Renders the PNG and returns its bytes: simulated latency and (when measured) host GB/s
 * against the last swept parameter (`x_param`, log2 axis), one line per combination of the
 * other parameters. Forbidden rows have no figures and are left out. gnuplot runs on files in
 * a temporary directory that is removed afterwards; a gnuplot failure is an nki::InternalError
 * carrying its first line of output.
 */
std::string render_sweep_png(const std::string& title, const std::string& x_param, const std::vector<SweepRow>& rows);

}  // namespace nki::cli
