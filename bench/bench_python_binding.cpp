/**
 * \file Google Benchmark suite: what a launch costs from Python (nki_cpp.run) beside the same
 * launch from C++, in one process: the binary embeds the interpreter and imports the module
 * from the build tree.
 *
 * Benchmarks, all tensor_add_nc2 on [512, 2048] bf16 (grid [spmd_dim(2, nc(2)), 4], two cores):
 *   cpp_launch              tensor_add()[grid].run({a, b}) on bf16 tensors already in HBM
 *   cpp_convert_and_launch  the same from float32 host data: Tensor::from_floats (rounding to
 *                           bf16) for both inputs, the launch, to_floats of the output: the work
 *                           nki_cpp.run does besides Python
 *   python_run              nki_cpp.run("tensor_add_nc2", a, b, dtype="bf16") on float32 arrays
 *   python_over_cpp         python_run and cpp_convert_and_launch alternated in one loop (order
 *                           flipped each iteration); counters python_us, cpp_us, overhead_us and
 *                           ratio = python / C++, from the same seconds
 */
#include <benchmark/benchmark.h>
#include <pybind11/embed.h>
#include <pybind11/numpy.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "check_once.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;
namespace py = pybind11;

namespace {

constexpr std::int64_t kRows = 512, kCols = 2048;

struct Inputs {
  std::vector<float> a, b;
  Inputs() : a(kRows * kCols), b(kRows * kCols) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(i % 251) * 0.125f - 15.0f;
      b[i] = static_cast<float>(i % 97) * 0.5f;
    }
  }
};

const Inputs& inputs() {
  static const Inputs in;
  return in;
}

nki::BoundLaunch cpp_launch() {
  return nki::kernels::tensor_add()[nl::spmd_dim(kRows / 256, nl::nc(2)), kCols / 512];
}

/** The C++ side as nki_cpp.run does it: float32 in, bf16 tensors, the launch, float32 out. */
std::vector<float> cpp_convert_and_launch(const nki::BoundLaunch& launch) {
  const nki::Tensor a = nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, inputs().a);
  const nki::Tensor b = nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, inputs().b);
  return launch.run({a, b}).outputs.front().to_floats();
}

/** The Python side: nki_cpp.run and float32 arrays of the same data. */
struct PythonSide {
  py::object run = py::module_::import("nki_cpp").attr("run");
  py::array_t<float> a{{kRows, kCols}, inputs().a.data()};
  py::array_t<float> b{{kRows, kCols}, inputs().b.data()};
  py::object call() const { return run("tensor_add_nc2", a, b, py::arg("dtype") = "bf16"); }
};

/// Made on first use, dropped before the interpreter ends (a static's destructor would run after).
std::optional<PythonSide> python;

PythonSide& python_side() {
  if (!python) python.emplace();
  return *python;
}

/** Both sides give the same floats (bf16 sums as float32); empty when they do. */
std::string check_sides() {
  const std::vector<float> cpp = cpp_convert_and_launch(cpp_launch());
  const py::array_t<float> out = python_side().call().cast<py::array_t<float>>();
  if (static_cast<std::size_t>(out.size()) != cpp.size()) return "nki_cpp.run returned another shape";
  if (std::memcmp(out.data(), cpp.data(), cpp.size() * sizeof(float)) != 0) return "nki_cpp.run differs from C++";
  return "";
}

bool skipped(benchmark::State& state) {
  const std::string& err = nki_bench::check_once("sides", check_sides);
  if (!err.empty()) state.SkipWithError(err.c_str());
  return !err.empty();
}

void BM_cpp_launch(benchmark::State& state) {
  if (skipped(state)) return;
  const nki::BoundLaunch launch = cpp_launch();
  const nki::Tensor a = nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, inputs().a);
  const nki::Tensor b = nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, inputs().b);
  for (auto _ : state) benchmark::DoNotOptimize(launch.run({a, b}).outputs.front().data());
}

void BM_cpp_convert_and_launch(benchmark::State& state) {
  if (skipped(state)) return;
  const nki::BoundLaunch launch = cpp_launch();
  for (auto _ : state) benchmark::DoNotOptimize(cpp_convert_and_launch(launch).data());
}

void BM_python_run(benchmark::State& state) {
  if (skipped(state)) return;
  const PythonSide& p = python_side();
  for (auto _ : state) benchmark::DoNotOptimize(p.call().ptr());
}

void BM_python_over_cpp(benchmark::State& state) {
  if (skipped(state)) return;
  const nki::BoundLaunch launch = cpp_launch();
  const PythonSide& p = python_side();
  using clock = std::chrono::steady_clock;
  double python_s = 0, cpp_s = 0;
  bool python_first = false;
  for (auto _ : state) {
    python_first = !python_first;
    for (int side = 0; side < 2; ++side) {
      const auto start = clock::now();
      if ((side == 0) == python_first) {
        benchmark::DoNotOptimize(p.call().ptr());
        python_s += std::chrono::duration<double>(clock::now() - start).count();
      } else {
        benchmark::DoNotOptimize(cpp_convert_and_launch(launch).data());
        cpp_s += std::chrono::duration<double>(clock::now() - start).count();
      }
    }
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["python_us"] = python_s / n * 1e6;
  state.counters["cpp_us"] = cpp_s / n * 1e6;
  state.counters["overhead_us"] = (python_s - cpp_s) / n * 1e6;
  state.counters["ratio"] = python_s / cpp_s;
}

}  // namespace

BENCHMARK(BM_cpp_launch)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_cpp_convert_and_launch)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_python_run)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_python_over_cpp)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);

int main(int argc, char** argv) {
  const py::scoped_interpreter interpreter;  // held by this thread; nki_cpp.run releases it while launching
  py::module_::import("sys").attr("path").attr("insert")(0, NKI_PYTHON_MODULE_DIR);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  python.reset();
  return 0;
}
