/** \file Checked mode: poisoned fresh memory, reads of unwritten elements, conflicting writers, unwritten outputs, run-time bounds. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/simulator/checked_mode_test.cpp";

nki::LaunchOptions checked() {
  nki::LaunchOptions o;
  o.checked = true;
  return o;
}
}  // namespace

TEST_CASE("checked mode - a kernel that writes everything it reads runs and matches the unchecked result") {
  const nki::Kernel k = nki::jit(
      "scaled_copy",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto buf = nl::ndarray({nl::par_dim(128), 64}, a.dtype(), nl::sbuf, "buf");
        buf[nl::_, nl::_] = nl::load(a[nl::_, nl::_]);
        nl::store(out[nl::_, nl::_], buf[nl::_, nl::_] * 2);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 3));
  const nki::Tensor want = k(a);
  const nki::LaunchResult r = k.launch({}).with(checked()).run({a});
  CHECK(test::first_difference(r.outputs[0], want) == -1);
}

TEST_CASE("checked mode - reading an SBUF element no instruction wrote names the op, instance and element") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "half_written",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto buf = nl::ndarray({nl::par_dim(128), 64}, a.dtype(), nl::sbuf, "buf");
        buf[nl::_, nl::ds(0, 32)] = nl::load(a[nl::_, nl::ds(0, 32)]);
        line = __LINE__ + 1;
        nl::store(out[nl::_, nl::_], nl::exp(buf[nl::_, nl::_]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 3));
  // Unchecked, the read is of whatever the SBUF held; checked, it is reported.
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({a}); });
  CHECK(msg == fmt::format("half_written ({}:{}): err_uninitialized_read: instance (no grid) reads element [0,32] of tensor "
                           "buf [128,64] (sbuf), which nothing wrote: fresh sbuf holds NaN",
                           kFile, line));
}

TEST_CASE("checked mode - a PSUM accumulation into a tensor never zeroed reads unwritten elements") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "psum_not_zeroed",
      [](nl::tensor st, nl::tensor mv) {
        auto out = nl::ndarray({32, 16}, nl::float32, nl::shared_hbm, "out");
        auto acc = nl::ndarray({32, 16}, nl::float32, nl::psum, "acc");
        for (auto i : nl::affine_range(2)) {
          line = __LINE__ + 1;
          acc[nl::_, nl::_] += nki::isa::nc_matmul(nl::load(st[nl::ds(i * 8, 8), nl::_]), nl::load(mv[nl::ds(i * 8, 8), nl::_]));
        }
        nl::store(out.all(), nl::copy(acc.all()));
        return out;
      },
      {"st", "mv"});
  auto st = nki::Tensor::from_floats({16, 32}, nki::DType::bf16, test::random_floats(16 * 32, 4));
  auto mv = nki::Tensor::from_floats({16, 16}, nki::DType::bf16, test::random_floats(16 * 16, 5));
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({st, mv}); });
  CHECK(msg == fmt::format("psum_not_zeroed ({}:{}): err_uninitialized_read: instance (no grid) l0=0 reads element [0,0] of "
                           "tensor acc [32,16] (psum), which nothing wrote: fresh psum holds NaN",
                           kFile, line));
}

TEST_CASE("checked mode - an integer SBUF tensor is poisoned with a pattern and its unwritten read reported") {
  const nki::Kernel k = nki::jit(
      "int_unwritten",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto buf = nl::ndarray({nl::par_dim(4), 8}, a.dtype(), nl::sbuf, "ibuf");
        nl::store(out[nl::_, nl::_], nl::copy(buf[nl::_, nl::_]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_values(nki::sim::Device::default_device(), {4, 8}, nki::DType::int32,
                                    std::vector<double>(32, 1.0));
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({a}); });
  CHECK(msg.ends_with("reads element [0,0] of tensor ibuf [4,8] (sbuf), which nothing wrote: fresh sbuf holds the "
                      "pattern 0xA5"));
}

TEST_CASE("checked mode - an output element no instance wrote is err_tensor_output_not_written_to") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "skips_last_tile",
      [](nl::tensor a) {
        line = __LINE__ + 1;
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        auto jf = nl::arange(64)[nl::newaxis, nl::_];
        // Instances 0..2 of 3 write rows 0..255 only: the mask drops the third tile.
        auto row = nl::program_id(0) * 128 + ip;
        nl::store(out[row, jf], nl::load(a[row, jf]), {.mask = row < 256});
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({384, 64}, nki::DType::fp32, test::random_floats(384 * 64, 6));
  const std::string msg = test::user_error_of([&] { k[3].with(checked()).run({a}); });
  CHECK(msg == fmt::format("skips_last_tile ({}:{}): err_tensor_output_not_written_to: no instance wrote element [256,0] of "
                           "output tensor out [384,64] (8192 of 24576 elements unwritten)",
                           kFile, line));
  // Unchecked, the same launch runs: NKI leaves such elements undefined.
  CHECK_NOTHROW(k[3](a));
}

TEST_CASE("checked mode - two instances writing one HBM element are both named") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "same_tile_twice",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm, "out");
        line = __LINE__ + 1;
        nl::store(out[nl::_, nl::_], nl::load(a[nl::ds(nl::program_id(0) * 128, 128), nl::_]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 7));
  const std::string msg = test::user_error_of([&] { k[2].with(checked()).run({a}); });
  CHECK(msg == fmt::format("same_tile_twice ({0}:{1}): err_instances_write_same_element: element [0,0] of tensor out [128,64] "
                           "is written by instance [0] ({0}:{1}) and by instance [1] ({0}:{1})",
                           kFile, line));
}

TEST_CASE("checked mode - two affine_range iterations writing one HBM element are both named") {
  static int first = 0, second = 0;
  const nki::Kernel k = nki::jit(
      "overlapping_iterations",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 96}, a.dtype(), nl::shared_hbm, "out");
        for (auto i : nl::affine_range(2)) {
          auto t = nl::load(a[nl::_, nl::ds(i * 32, 32)]);
          // Each store alone is disjoint across iterations; together iteration 0's second store
          // (columns 32..47) and iteration 1's first (columns 32..63) write the same elements.
          first = __LINE__ + 1;
          nl::store(out[nl::_, nl::ds(i * 32, 32)], t);
          second = __LINE__ + 1;
          nl::store(out[nl::_, nl::ds(i * 32 + 32, 16)], nl::load(a[nl::_, nl::ds(i * 32, 16)]));
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 8));
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({a}); });
  CHECK(msg == fmt::format("overlapping_iterations ({0}:{1}): err_unexpected_output_dependencies: element [0,32] of tensor out "
                           "[128,96] is written by instance (no grid) l0=0 ({0}:{2}) and by instance (no grid) l0=1 "
                           "({0}:{1})",
                           kFile, first, second));
}

TEST_CASE("checked mode - a sequential_range overwriting one element is allowed") {
  const nki::Kernel k = nki::jit(
      "last_wins",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 32}, a.dtype(), nl::shared_hbm, "out");
        for (auto i : nl::sequential_range(2)) nl::store(out[nl::_, nl::_], nl::load(a[nl::_, nl::ds(i * 32, 32)]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 9));
  const nki::LaunchResult r = k.launch({}).with(checked()).run({a});
  const std::vector<float> av = a.to_floats(), got = r.outputs[0].to_floats();
  CHECK(got[0] == av[32]);
}

TEST_CASE("checked mode - an access out of bounds at run time names the instance and the index") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "reads_past_end",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm, "out");
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        auto jf = nl::arange(64)[nl::newaxis, nl::_];
        line = __LINE__ + 1;
        auto t = nl::load(a[ip, nl::program_id(0) * 64 + jf], {.mask = jf != 63});
        nl::store(out[ip, jf], t, {.mask = jf != 63});
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 100}, nki::DType::fp32, test::random_floats(128 * 100, 10));
  const std::string msg = test::user_error_of([&] { k[2].with(checked()).run({a}); });
  CHECK(msg == fmt::format("reads_past_end ({}:{}): err_tensor_access_out_of_bound: instance [1] at tile coordinate [0,36] "
                           "accesses tensor a [128,100] at index 100 on dimension 1, valid is [0, 99]",
                           kFile, line));
}
