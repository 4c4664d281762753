/** \file gnuplot rendering of a tile sweep. */
#include "sweep_plot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "nki/error.h"

extern char** environ;

namespace nki::cli {

namespace fs = std::filesystem;

namespace {

bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    if (!d.empty() && ::access((fs::path(d) / "gnuplot").c_str(), X_OK) == 0) return true;
  }
  return false;
}

/** A gnuplot string literal: single quotes, a quote doubled. */
std::string gnuplot_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/** A directory of our own under the system's temporary directory, removed when destroyed. */
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "nki-plot-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw InternalError("cannot create a temporary directory for gnuplot");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/** Runs `gnuplot script` with its output in `log`; returns the exit status (127: could not start). */
int run_gnuplot(const fs::path& script, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  const std::string prog = "gnuplot", arg = script.string();
  char* argv[] = {const_cast<char*>(prog.c_str()), const_cast<char*>(arg.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void require_gnuplot() {
  if (!gnuplot_on_path()) {
    throw UserError("err_gnuplot_missing", "", {},
                    "--plot needs gnuplot, which is not on PATH (Debian: apt-get install gnuplot-nox)");
  }
}

std::string render_sweep_png(const std::string& title, const std::string& x_param, const std::vector<SweepRow>& rows) {
  // One series per combination of the parameters other than x, in ascending order of their values.
  std::map<std::vector<std::int64_t>, std::string> series_labels;
  std::map<std::string, std::vector<const SweepRow*>> by_series;
  bool host = false;
  for (const SweepRow& r : rows) {
    if (r.forbidden) continue;
    host = host || r.host_measured;
    std::string label;
    std::vector<std::int64_t> others;
    for (const auto& [n, v] : r.config.values) {
      if (n == x_param) continue;
      label += fmt::format("{}{}={}", label.empty() ? "" : " ", n, v);
      others.push_back(v);
    }
    if (label.empty()) label = "all";
    series_labels[others] = label;
    by_series[label].push_back(&r);
  }
  std::vector<std::string> series;
  for (const auto& [values, label] : series_labels) series.push_back(label);
  const ScratchDir dir;
  const fs::path data = dir.path() / "sweep.dat", script = dir.path() / "sweep.gp", png = dir.path() / "sweep.png",
                 log = dir.path() / "gnuplot.log";
  {
    std::ofstream d(data);
    for (const std::string& s : series) {
      std::vector<const SweepRow*> points = by_series[s];
      std::sort(points.begin(), points.end(),
                [&](const SweepRow* a, const SweepRow* b) { return a->config.at(x_param) < b->config.at(x_param); });
      for (const SweepRow* r : points)
        d << fmt::format("{} {:.6g} {:.6g}\n", r->config.at(x_param), r->simulated_us, r->host_gbps);
      d << "\n\n";  // the next gnuplot data block (index)
    }
  }
  auto plot = [&](int column) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < series.size(); ++i) {
      parts.push_back(fmt::format("{} index {} using 1:{} with linespoints title {}", i == 0 ? gnuplot_string(data.string()) : "''",
                                  i, column, gnuplot_string(series[i])));
    }
    return fmt::format("plot {}\n", fmt::join(parts, ", "));
  };
  {
    std::ofstream g(script);
    // noenhanced: kernel names are text, not markup (`_` would start a subscript).
    g << fmt::format("set terminal pngcairo noenhanced size {},480 font ',10'\n", host ? 1200 : 640);
    g << "set output " << gnuplot_string(png.string()) << "\n";
    g << "set logscale x 2\nset grid\n";
    g << "set xlabel " << gnuplot_string(x_param) << "\n";
    g << "set multiplot layout 1," << (host ? 2 : 1) << " title " << gnuplot_string(title) << "\n";
    g << "set key top right\nset ylabel 'simulated device latency (us)'\n" << plot(2);
    if (host) g << "set key top left\nset ylabel 'host GB/s'\n" << plot(3);
    g << "unset multiplot\n";
  }
  const int status = run_gnuplot(script, log);
  std::string first_line = read_file(log);
  first_line = first_line.substr(0, first_line.find('\n'));
  if (status != 0 || !fs::exists(png)) {
    throw InternalError(fmt::format("gnuplot exited with status {} rendering the plot: {}", status, first_line));
  }
  return read_file(png);
}

}  // namespace nki::cli
