/** \file nki::sweep from C++: the rows in order, a forbidden one with its reason, the best, the record only when asked. */
#include <doctest/doctest.h>

#include "nki/autotune.h"
#include "nki/kernels.h"
#include "nki/sweep.h"
#include "test_support.h"

namespace {

const std::vector<nki::TensorSpec> kArgs{{{256, 1024}, nki::language::bfloat16}, {{256, 1024}, nki::language::bfloat16}};

const std::string kP256Forbidden =
    "err_num_partition_exceed_arch_limit: P=256 rows exceed the 128 partitions of trn2's SBUF";

std::vector<std::string> names_of(const std::vector<nki::TuningConfig>& configs) {
  std::vector<std::string> out;
  for (const nki::TuningConfig& c : configs) out.push_back(c.str());
  return out;
}

std::vector<std::string> configs_of(const std::vector<nki::SweepRow>& rows) {
  std::vector<nki::TuningConfig> configs;
  for (const nki::SweepRow& r : rows) configs.push_back(r.config);
  return names_of(configs);
}

}  // namespace

TEST_CASE("nki::sweep_configs - every combination, the kernel's first parameter outermost, unswept ones at defaults") {
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  CHECK(names_of(nki::sweep_configs(k, {{"F", {256, 512}}, {"P", {64, 256}}})) ==
        std::vector<std::string>{"P=64 F=256", "P=64 F=512", "P=256 F=256", "P=256 F=512"});
  CHECK(names_of(nki::sweep_configs(k, {{"P", {32}}})) == std::vector<std::string>{"P=32 F=512"});
  CHECK(test::user_error_of([&] { (void)nki::sweep_configs(k, {{"Q", {32}}}); }) ==
        "tensor_add_tiled: err_invalid_sweep: the sweep: Q is not a parameter of tensor_add_tiled; its parameters: P, F");
  CHECK(test::user_error_of([&] { (void)nki::sweep_configs(k, {{"P", {48}}}); }) ==
        "tensor_add_tiled: err_invalid_sweep: the sweep: P=48 is not a value of tensor_add_tiled's P; its values: 1, 2, "
        "4, 8, 16, 32, 64, 128, 256, 512");
}

TEST_CASE("nki::sweep - simulated: sorted by latency, the forbidden rows last with their reason, no record unless asked") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const std::vector<nki::TuningConfig> configs = nki::sweep_configs(k, {{"P", {64, 256, 128}}, {"F", {512}}});
  std::vector<std::string> started, done;
  nki::SweepOptions options{.metric = nki::SweepMetric::simulated, .iters = 0};
  options.on_start = [&](std::size_t i, const nki::TuningConfig& c) { started.push_back(std::to_string(i) + " " + c.str()); };
  options.on_done = [&](std::size_t i, const nki::SweepRow& r) { done.push_back(std::to_string(i) + " " + r.config.str()); };
  const std::vector<nki::SweepRow> rows = nki::sweep(k, configs, kArgs, "trn2", options);

  // In the order given while measuring; sorted afterwards.
  CHECK(started == std::vector<std::string>{"0 P=64 F=512", "1 P=256 F=512", "2 P=128 F=512"});
  CHECK(done == started);
  CHECK(configs_of(rows) == std::vector<std::string>{"P=64 F=512", "P=128 F=512", "P=256 F=512"});
  CHECK(rows[0].best);
  CHECK(!rows[1].best);
  CHECK(!rows[2].best);
  CHECK(!rows[0].forbidden);
  CHECK(!rows[1].forbidden);
  CHECK(rows[2].forbidden == kP256Forbidden);
  CHECK(rows[0].simulated_us > 0);
  CHECK(rows[0].simulated_us < rows[1].simulated_us);
  CHECK(rows[2].simulated_us == 0);
  for (const nki::SweepRow& r : rows) CHECK(!r.host_measured);
  const nki::autotune::Lookup l = nki::autotune::lookup(k, kArgs, "trn2");
  CHECK(!l.record);
  CHECK(l.miss == "no record");
}

TEST_CASE("nki::sweep - record: the best configuration becomes the autotune record, with its figure") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const std::vector<nki::SweepRow> rows =
      nki::sweep(k, nki::sweep_configs(k, {{"P", {64, 128}}}), kArgs, "trn2", {.iters = 0, .record = true});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].config.str() == "P=64 F=512");
  CHECK(rows[0].best);
  const nki::autotune::Lookup l = nki::autotune::lookup(k, kArgs, "trn2");
  REQUIRE(l.record);
  CHECK(l.record->config == rows[0].config);
  CHECK(l.record->metric == "simulated");
  CHECK(l.record->value == rows[0].simulated_us);
  CHECK(!nki::autotune::lookup(k, kArgs, "trn1").record);  // the target is part of the key
}

TEST_CASE("nki::sweep - every configuration forbidden: refused before anything is measured, nothing recorded") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  int measured = 0;
  nki::SweepOptions options{.iters = 0, .record = true};
  options.on_start = [&](std::size_t, const nki::TuningConfig&) { ++measured; };
  CHECK(test::user_error_of([&] { (void)nki::sweep(k, nki::sweep_configs(k, {{"P", {256, 512}}}), kArgs, "trn2", options); }) ==
        "tensor_add_tiled: err_no_legal_configuration: every configuration of the sweep is forbidden on trn2 (first: "
        "P=256 F=512: " + kP256Forbidden + ")");
  CHECK(measured == 0);
  CHECK(!nki::autotune::lookup(k, kArgs, "trn2").record);
  CHECK(test::user_error_of([&] { (void)nki::sweep(k, {}, kArgs, "trn2", options); }) ==
        "tensor_add_tiled: err_invalid_sweep: the sweep has no configuration");
  CHECK(test::user_error_of([&] {
          (void)nki::sweep(k, nki::sweep_configs(k, {}), kArgs, "trn2", {.metric = nki::SweepMetric::host, .iters = 0});
        }) == "err_invalid_iters: iters 0: expected a count >= 1");
}

TEST_CASE("nki::sweep - tensors: host runs on their data and device, sorted by the host metric") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const nki::sim::Device device("trn2", 2);
  const std::vector<float> a = test::random_floats(256 * 512, 1), b = test::random_floats(256 * 512, 2);
  const std::vector<nki::Tensor> args{nki::Tensor::from_floats({256, 512}, nki::language::float32, a, device),
                                      nki::Tensor::from_floats({256, 512}, nki::language::float32, b, device)};
  const std::vector<nki::SweepRow> rows = nki::sweep(k, nki::sweep_configs(k, {{"P", {64, 128}}, {"F", {512}}}), args,
                                                     {.metric = nki::SweepMetric::host, .iters = 1});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].best);
  CHECK(!rows[1].best);
  CHECK(rows[0].host_us <= rows[1].host_us);
  for (const nki::SweepRow& r : rows) {
    CHECK(r.host_measured);
    CHECK(r.simulated_us > 0);
    // 3 tensors of 256 x 512 float32 moved in host_us.
    CHECK(r.host_gbps == doctest::Approx(3 * 256 * 512 * 4 / (r.host_us * 1e3)));
  }
  CHECK(!nki::autotune::lookup(k, {{{256, 512}, nki::language::float32}, {{256, 512}, nki::language::float32}}, "trn2")
             .record);
}
