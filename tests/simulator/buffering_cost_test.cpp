/**
 * \file Mechanisms of the cost model, each by its effect: a DMA's bytes set its time, a loop-local
 * tile gets the buffers its allocation leaves room for (and no more), a transfer ready early
 * takes an idle queue before one ready later, and each chip's cores share that chip's HBM.
 */
#include "test_support.h"

#include "nki/kernels.h"
#include "nki/simulator/capacity.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;

namespace {

const nki::sim::TargetSpec& trn1() { return nki::sim::target_spec("trn1"); }

std::shared_ptr<const nki::ir::KernelIR> ir_of(const nki::Kernel& k, const std::vector<nki::Shape>& shapes) {
  return k.trace(shapes, std::vector<nki::DType>(shapes.size(), nki::DType::bf16), nki::GridSpec{}, 2)->ir;
}

double latency(const nki::ir::KernelIR& ir, const std::vector<nki::sim::CoreWork>& cores = {{0, {{}}}}) {
  return nki::sim::estimate(ir, cores, trn1(), false).latency_us;
}

/** `trips` iterations of: load a [128, F] bf16 tile into a loop-local buffer, then a matmul reads it. */
nki::Kernel load_then_matmul(std::int64_t trips, std::int64_t pad_free) {
  return nki::jit(
      "load_then_matmul",
      [trips, pad_free](nl::tensor w, nl::tensor x) {
        auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "out");
        // pad fills the SBUF so that little is left for a second buffer.
        auto pad = nl::zeros({nl::par_dim(128), pad_free}, nl::bfloat16, nl::sbuf, "pad");
        auto acc = nl::zeros({128, 512}, nl::float32, nl::psum, "acc");
        auto wt = nl::load(w.all());
        for (auto i : nl::affine_range(trips)) {
          auto buf = nl::ndarray({nl::par_dim(128), 512}, nl::bfloat16, nl::sbuf, "buf");
          buf[nl::_, nl::_] = nl::load(x[nl::ds(i * 128, 128), nl::_]);
          acc[nl::_, nl::_] += nl::matmul(wt, buf[nl::_, nl::_], true);
        }
        nl::store(out.all(), nl::copy(acc) + nl::copy(pad[nl::_, nl::ds(0, 512)]));
        return out;
      },
      {"w", "x"});
}

}  // namespace

TEST_CASE("cost - a DMA at full efficiency takes twice as long to move twice the bytes, after the same fixed cost") {
  const double one = nki::sim::dma_queue_us(trn1(), 1 << 20, 4096, false) - trn1().dma_fixed_us;
  const double two = nki::sim::dma_queue_us(trn1(), 2 << 20, 4096, false) - trn1().dma_fixed_us;
  CHECK(two == doctest::Approx(2 * one).epsilon(1e-12));
  // Below full efficiency the rate is lower: rows of 2 KiB move at half the rate of 4 KiB rows.
  CHECK(nki::sim::dma_queue_us(trn1(), 1 << 20, 2048, false) - trn1().dma_fixed_us == doctest::Approx(2 * one).epsilon(1e-12));
}

TEST_CASE("cost - a loop-local buffer gets as many buffers as the SBUF leaves room for, so loads run ahead") {
  const std::vector<nki::Shape> shapes{{128, 128}, {128 * 16, 512}};
  // Room for every iteration's buffer: each load goes as soon as a queue is free.
  const auto roomy = ir_of(load_then_matmul(16, 512), shapes);
  const std::vector<int> b = nki::sim::loop_buffers(*roomy, trn1());
  int buf = -1;
  for (std::size_t t = 0; t < roomy->tensors.size(); ++t)
    if (roomy->tensors[t].name == "buf") buf = static_cast<int>(t);
  REQUIRE(buf >= 0);
  CHECK(b[static_cast<std::size_t>(buf)] == 16);  // capped at the loop's trip count
  // 196608 bytes per partition: the pad leaves less than a second 1 KiB buffer.
  const std::int64_t pad = (196608 - 1024 - 256 - 2048 - 2048 - 512) / 2;
  const auto tight = ir_of(load_then_matmul(16, pad), shapes);
  CHECK(nki::sim::loop_buffers(*tight, trn1())[static_cast<std::size_t>(buf)] == 1);
  // One buffer: every load waits for the last matmul's read, so the 16 loads run one after the
  // other; with 16 they overlap on 16 queues.
  const double single = latency(*tight), many = latency(*roomy);
  const double load_us = nki::sim::dma_queue_us(trn1(), 128 * 512 * 2, 1024, false);
  CHECK(single > 16 * load_us);
  CHECK(many < 3 * load_us);
}

TEST_CASE("cost - PSUM buffers of a loop-local accumulator are whole banks, never more than are free") {
  const nki::Kernel k = nki::jit(
      "psum_per_iteration",
      [](nl::tensor w, nl::tensor x) {
        auto out = nl::ndarray({128 * 16, 512}, nl::float32, nl::shared_hbm, "out");
        auto wt = nl::load(w.all());
        for (auto i : nl::affine_range(16)) {
          auto acc = nl::zeros({128, 512}, nl::float32, nl::psum, "acc");  // one 2 KiB bank
          acc[nl::_, nl::_] += nl::matmul(wt, nl::load(x[nl::ds(i * 128, 128), nl::_]), true);
          nl::store(out[nl::ds(i * 128, 128), nl::_], nl::copy(acc));
        }
        return out;
      },
      {"w", "x"});
  const auto ir = ir_of(k, {{128, 128}, {128 * 16, 512}});
  int acc = -1;
  for (std::size_t t = 0; t < ir->tensors.size(); ++t)
    if (ir->tensors[t].name == "acc") acc = static_cast<int>(t);
  REQUIRE(acc >= 0);
  // 8 banks of 2 KiB: the accumulator and the matmul's own result hold 4 KiB, 12 KiB are free: 6 more banks.
  CHECK(nki::sim::loop_buffers(*ir, trn1())[static_cast<std::size_t>(acc)] == 7);
}

TEST_CASE("cost - a store ready early takes an idle DMA queue before loads that are ready later") {
  // Many loads wait for a long chain of Vector work; the store of the first tile does not: it
  // goes in the idle time of the queues, not after the loads that come before it in program order.
  const nki::Kernel k = nki::jit(
      "early_store",
      [](nl::tensor a, nl::tensor b) {
        auto out = nl::ndarray({128, 512}, nl::bfloat16, nl::shared_hbm, "out");
        auto out2 = nl::ndarray({128 * 32, 512}, nl::bfloat16, nl::shared_hbm, "out2");
        auto t = nl::load(a.all());
        auto slow = t;
        for (int i = 0; i < 200; ++i) slow = nl::exp(slow);  // 200 x 572 Scalar cycles: 82 us
        for (auto i : nl::affine_range(32)) nl::store(out2[nl::ds(i * 128, 128), nl::_], slow);
        nl::store(out.all(), nl::load(b.all()));
        return out;
      },
      {"a", "b"});
  const auto ir = ir_of(k, {{128, 512}, {128, 512}});
  const nki::sim::ProfileReport r = nki::sim::estimate(*ir, {{0, {{}}}}, trn1(), true);
  double last_store_start = 0, copy_end = 0;
  for (const nki::sim::Event& e : r.cores.at(0).events) {
    if (r.ops[e.op] != "store") continue;
    last_store_start = std::max(last_store_start, e.start_us);
    copy_end = e.end_us;  // the copy's store is the last in program order
  }
  // The copy (a load and its store, 22 us each) is done long before the 32 stores of `slow` start.
  CHECK(copy_end < last_store_start);
}

TEST_CASE("cost - the cores of two chips each share their own chip's HBM, not one chip's") {
  // Rows of 4 KiB: a core's 16 queues move 432 GB/s, so four cores on one chip's 820 GB/s are HBM-bound.
  const nki::Kernel k = nki::jit("copy_rows", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    for (auto i : nl::affine_range(a.shape()[0] / 128))
      nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a[nl::ds(i * 128, 128), nl::_]));
    return out;
  });
  const auto ir = ir_of(k, {{128 * 64, 2048}});
  auto on = [](int nc, int chip) { return nki::sim::CoreWork{nc, {{}}, 0, chip}; };
  const double one_chip = latency(*ir, {on(0, 0), on(1, 0), on(2, 0), on(3, 0)});
  const double two_chips = latency(*ir, {on(0, 0), on(1, 0), on(2, 1), on(3, 1)});
  // Each core gets half of its chip's 820 GB/s instead of a quarter: the bytes move in about half the time.
  CHECK(two_chips < 0.6 * one_chip);
  const double bytes = 2.0 * 128 * 64 * 2048 * 2;  // loads and stores of one core
  CHECK(one_chip > bytes / (820e3 / 4));
}
