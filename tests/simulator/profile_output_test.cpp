/** \file Profile reports: the JSON object, the Chrome trace, the matmul estimate within its time budget, nki::benchmark. */
#include "test_support.h"

#include <chrono>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "nki/kernels.h"

namespace nl = nki::language;

namespace {
std::vector<nki::TensorSpec> add_args(std::int64_t p, std::int64_t f) {
  return {{{p, f}, nki::DType::bf16}, {{p, f}, nki::DType::bf16}};
}
}  // namespace

TEST_CASE("profile JSON - latency_us, flops, hfu, dma_bytes and per core engines with busy_us and utilization") {
  const nki::Kernel& k = nki::kernels::tensor_add();
  const auto r = nki::profile(k[nl::spmd_dim(2, nl::nc(2)), 4], add_args(512, 2048), "trn2");
  const nlohmann::json j = nlohmann::json::parse(nki::sim::profile_json(r));
  CHECK(j["kernel"] == "tensor_add");
  CHECK(j["target"] == "trn2");
  CHECK(j["grid"] == "spmd_dim(2,nc(2)),4");
  CHECK(j["flops"] == 0);
  CHECK(j["hfu"] == 0.0);
  CHECK(j["dma_bytes"] == 3 * 512 * 2048 * 2);
  CHECK(j["instructions"] == 64);
  REQUIRE(j["cores"].size() == 2);
  for (int c = 0; c < 2; ++c) {
    const auto& core = j["cores"][static_cast<std::size_t>(c)];
    CHECK(core["nc"] == c);
    CHECK(core["instances"] == 8);
    CHECK(core["latency_us"].get<double>() > 0.0);
    for (const char* e : {"Tensor", "Vector", "Scalar", "GpSimd", "DMA"}) {
      CAPTURE(e);
      REQUIRE(core["engines"].contains(e));
      CHECK(core["engines"][e]["utilization"].get<double>() >= 0.0);
      CHECK(core["engines"][e]["utilization"].get<double>() <= 1.0);
    }
    CHECK(core["engines"]["Vector"]["instructions"] == 8);
    CHECK(core["engines"]["DMA"]["instructions"] == 24);
  }
  CHECK(j["latency_us"].get<double>() == std::max(j["cores"][0]["latency_us"].get<double>(), j["cores"][1]["latency_us"].get<double>()));
}

TEST_CASE("profile trace - Chrome Trace Event JSON: a process per core, a thread per engine queue, op, source and ids") {
  const nki::Kernel& k = nki::kernels::tensor_add();
  const auto r = nki::profile(k[nl::spmd_dim(2, nl::nc(2)), 4], add_args(512, 2048), "trn2");
  const nlohmann::json j = nlohmann::json::parse(nki::sim::chrome_trace_json(r));
  REQUIRE(j["traceEvents"].is_array());
  std::map<int, std::string> processes;
  std::set<std::pair<int, std::string>> threads;
  int complete = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert({e["pid"].get<int>(), e["args"]["name"]});
    if (e["ph"] != "X") continue;
    ++complete;
    CHECK(e["dur"].get<double>() > 0.0);
    CHECK(e["ts"].get<double>() >= 0.0);
    const std::string source = e["args"]["source"];
    CHECK(source.starts_with("kernels/src/tensor_add.cpp:"));
    CHECK(e["args"]["op"] == e["name"]);
    const auto pid = e["args"]["instance"].get<std::vector<std::int64_t>>();
    REQUIRE(pid.size() == 2);
    CHECK(pid[0] % 2 == e["pid"].get<int>());  // NC0 runs even program_id(0), NC1 odd
  }
  CHECK(complete == 64);
  CHECK(processes == std::map<int, std::string>{{0, "NC0"}, {1, "NC1"}});
  for (int nc : {0, 1})
    for (const char* t : {"Tensor", "Vector", "Scalar", "GpSimd", "DMA0", "DMA1"}) CHECK(threads.count({nc, t}) == 1);
}

TEST_CASE("profile - matmul [4096,8192] @ [8192,8192] bf16 on trn1 is estimated in well under 10 s") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = nki::profile(nki::kernels::matmul_fully_optimized().launch({}),
                              {{{8192, 4096}, nki::DType::bf16}, {{8192, 8192}, nki::DType::bf16}}, "trn1", false);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(seconds < 10.0);
  CHECK(r.flops == 2LL * 4096 * 8192 * 8192);
  CHECK(r.cores.at(0).engines[0].instructions == 32 * 16 * 64);  // one nc_matmul per [128 x 512 x 128] tile product
  CHECK(r.hfu > 0.0);
  CHECK(r.hfu <= 1.0);
  // No Tensor engine can beat its peak: latency >= FLOPs / 91.75 TFLOP/s.
  CHECK(r.latency_us >= static_cast<double>(r.flops) / (2.0 * 128 * 128 * 2.8e3));
}

TEST_CASE("matmul - the blocked kernel computes lhsT^T @ rhs on both executors") {
  const nki::Kernel& k = nki::kernels::matmul_fully_optimized();
  const std::int64_t K = 256, M = 256, N = 1024;
  auto lhsT = nki::Tensor::from_floats({K, M}, nki::DType::fp32, test::random_floats(K * M, 11, -1.0f, 1.0f));
  auto rhs = nki::Tensor::from_floats({K, N}, nki::DType::fp32, test::random_floats(K * N, 12, -1.0f, 1.0f));
  const auto l = lhsT.to_floats(), r = rhs.to_floats();
  std::vector<double> want(static_cast<std::size_t>(M * N), 0.0);
  for (std::int64_t kk = 0; kk < K; ++kk)
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t n = 0; n < N; ++n)
        want[static_cast<std::size_t>(m * N + n)] += static_cast<double>(l[static_cast<std::size_t>(kk * M + m)]) *
                                                     r[static_cast<std::size_t>(kk * N + n)];
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({lhsT, rhs}).outputs.at(0).to_floats();
    for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == doctest::Approx(want[i]).epsilon(1e-4).scale(1.0));
  }
}

TEST_CASE("benchmark - warmup and timed launches give ordered percentiles p0 through p100") {
  const nki::Kernel& k = nki::kernels::tensor_add();
  auto a = nki::Tensor::from_floats({256, 1024}, nki::DType::bf16, test::random_floats(256 * 1024, 13));
  auto b = nki::Tensor::from_floats({256, 1024}, nki::DType::bf16, test::random_floats(256 * 1024, 14));
  const nki::BenchmarkResult r = nki::benchmark(k[2, 2], a, b, 2, 20);
  CHECK(r.warmup == 2);
  CHECK(r.iters == 20);
  REQUIRE(r.samples_us.size() == 20);
  const double mn = *std::min_element(r.samples_us.begin(), r.samples_us.end());
  const double mx = *std::max_element(r.samples_us.begin(), r.samples_us.end());
  CHECK(r.p0 == mn);
  CHECK(r.p100 == mx);
  CHECK(r.p0 <= r.p1);
  CHECK(r.p1 <= r.p10);
  CHECK(r.p10 <= r.p25);
  CHECK(r.p25 <= r.p50);
  CHECK(r.p50 <= r.p90);
  CHECK(r.p90 <= r.p99);
  CHECK(r.p99 <= r.p100);
  std::vector<double> sorted = r.samples_us;
  std::sort(sorted.begin(), sorted.end());
  CHECK(r.p50 == sorted[9]);  // nearest rank: ceil(0.5 x 20) = the 10th
  CHECK(r.p90 == sorted[17]);
  CHECK(test::user_error_of([&] { nki::benchmark(k[2, 2], a, b, 0, 0); }) ==
        "tensor_add: err_invalid_benchmark: warmup 0 and iters 0: warmup must be >= 0 and iters >= 1");
}

TEST_CASE("profile - nki::profile on tensors uses their device's target") {
  nki::sim::Device dev("trn1", 2);
  auto a = nki::Tensor::from_floats({128, 512}, nki::DType::bf16, test::random_floats(128 * 512, 15), dev);
  auto b = nki::Tensor::from_floats({128, 512}, nki::DType::bf16, test::random_floats(128 * 512, 16), dev);
  const auto r = nki::profile(nki::kernels::tensor_add()[1, 1], a, b);
  CHECK(r.target == "trn1");
  CHECK(r.dma_bytes == 3 * 131072);
  CHECK(test::user_error_of([&] { nki::profile(nki::kernels::tensor_add()[1, 1], add_args(128, 512), "trn9"); }) ==
        "err_unknown_target: unknown target \"trn9\"; expected one of trn1, inf2, trn2, trn3");
}
