/**
 * \file Host threads launching one kernel at once: the process compiles (or loads) its artifact
 * once, every launch uses it, and every result is right. In the ThreadSanitizer lane too.
 */
#include <latch>
#include <thread>

#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("four threads launching a kernel at once share one artifact, compiled or loaded once") {
  const nki::Kernel k = nki::jit("concurrent_compile", [](nl::tensor a, nl::tensor b) {
    auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::program_id(0) * 64 + nl::arange(64)[nl::_, nl::newaxis];
    auto j = nl::arange(32)[nl::newaxis, nl::_];
    nl::store(c[i, j], nl::load(a[i, j]) * 3.0f - nl::load(b[i, j]));
    return c;
  });
  constexpr int kThreads = 4;
  std::vector<nki::Tensor> as, bs;
  for (int t = 0; t < kThreads; ++t) {
    as.push_back(nki::Tensor::from_floats({256, 32}, nki::DType::fp32, test::random_floats(256 * 32, 10 + t)));
    bs.push_back(nki::Tensor::from_floats({256, 32}, nki::DType::fp32, test::random_floats(256 * 32, 20 + t)));
  }
  const std::int64_t before = nki::compile_count();
  std::vector<nki::LaunchResult> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::latch start(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();  // all launch at once
        try {
          results[t] = k.launch({{nl::spmd_dim(2, nl::nc(2))}}).run({as[t], bs[t]});
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    }
  }
  int compiled = 0;
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    REQUIRE(errors[t] == "");
    compiled += results[t].compiled;
    CHECK(results[t].artifact_keys == results[0].artifact_keys);
    const std::vector<float> a = as[t].to_floats(), b = bs[t].to_floats(), c = results[t].outputs.at(0).to_floats();
    for (std::size_t e = 0; e < c.size(); ++e) {
      if (c[e] != a[e] * 3.0f - b[e]) FAIL(fmt::format("thread {} element {}: {} != {}", t, e, c[e], a[e] * 3.0f - b[e]));
    }
  }
  CHECK(results[0].artifact_keys.size() == 1);
  // Compiled here once at most (0 when an earlier process left it in the cache directory).
  CHECK(compiled <= 1);
  CHECK(nki::compile_count() - before == compiled);
}
