/**
 * \file Checked mode: an element one instance writes and another reads, through shared HBM, is
 * a race (NKI runs instances in no order): err_read_write_race names both instances, both
 * lines and the element, whichever of the two accesses ran first.
 */
#include "test_support.h"

namespace nl = nki::language;

namespace {

const char* kFile = "tests/simulator/checked_race_test.cpp";

nki::LaunchOptions checked() {
  nki::LaunchOptions o;
  o.checked = true;
  return o;
}

}  // namespace

TEST_CASE("checked race - an instance reads a tile of a shared_hbm scratch another instance wrote") {
  static int write_line = 0, read_line = 0;
  const nki::Kernel k = nki::jit(
      "reads_neighbour",
      [](nl::tensor a) {
        auto scratch = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "scratch");
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        auto jf = nl::arange(64)[nl::newaxis, nl::_];
        auto mine = nl::program_id(0) * 128 + ip;
        write_line = __LINE__ + 1;
        nl::store(scratch[mine, jf], nl::load(a[mine, jf]));
        read_line = __LINE__ + 1;
        auto first = nl::load(scratch[ip, jf]);  // tile 0: instance 0's
        nl::store(out[mine, jf], first);
        return out;
      },
      {"a"});
  const nki::Tensor a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  // One core: instance 0 writes tile 0 and then instance 1 reads it; the read finds the write.
  const std::string msg = test::user_error_of([&] { (void)k[2].with(checked()).run({a}); });
  CHECK(msg == fmt::format("reads_neighbour ({0}:{2}): err_read_write_race: element [0,0] of tensor scratch [256,64] is "
                           "written by instance [0] ({0}:{1}) and read by instance [1] ({0}:{2}): NKI runs instances in "
                           "no order, so the read may see the value before or after the write; let one instance both "
                           "write and read it, or read it in a later launch",
                           kFile, write_line, read_line));
  // Unchecked, the launch runs (the compiled code gives one order of many).
  CHECK_NOTHROW((void)k[2](a));
}

TEST_CASE("checked race - an instance writes in place an element of an argument another instance read") {
  static int write_line = 0, read_line = 0;
  const nki::Kernel k = nki::jit(
      "overwrites_what_was_read",
      [](nl::tensor buf) {
        auto out = nl::ndarray(buf.shape(), buf.dtype(), nl::shared_hbm, "out");
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        auto jf = nl::arange(64)[nl::newaxis, nl::_];
        auto mine = nl::program_id(0) * 128 + ip;
        read_line = __LINE__ + 1;
        auto last = nl::load(buf[128 + ip, jf]);  // tile 1, which instance 1 overwrites
        nl::store(out[mine, jf], last);
        write_line = __LINE__ + 1;
        nl::store(buf[mine, jf], last * 2);
        return out;
      },
      {"buf"});
  const nki::Tensor buf = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 2));
  // Instance 0 reads tile 1 first; instance 1's write of it finds that read.
  const std::string msg = test::user_error_of([&] { (void)k[2].with(checked()).run({buf}); });
  const std::string pair = fmt::format("err_read_write_race: element [128,0] of tensor buf [256,64] is written by instance "
                                       "[1] ({0}:{1}) and read by instance [0] ({0}:{2}): NKI runs instances in no order, so "
                                       "the read may see the value before or after the write; let one instance both write "
                                       "and read it, or read it in a later launch",
                                       kFile, write_line, read_line);
  CHECK(msg == fmt::format("overwrites_what_was_read ({}:{}): {}", kFile, write_line, pair));
  // Two cores at once: whichever access comes second finds the first and names the same pair
  // (the write first: the read finds it; the read first: the write finds it).
  for (int run = 0; run < 4; ++run) {
    const nki::Tensor again = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 2));
    const std::string both = test::user_error_of([&] { (void)k[nl::nc(2)].with(checked()).run({again}); });
    CHECK(both.ends_with(pair));
  }
}

TEST_CASE("checked race - instances that read and write only their own tiles run") {
  const nki::Kernel k = nki::jit(
      "own_tiles",
      [](nl::tensor a) {
        auto scratch = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "scratch");
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto mine = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
        auto jf = nl::arange(64)[nl::newaxis, nl::_];
        nl::store(scratch[mine, jf], nl::load(a[mine, jf]) * 3);
        nl::store(out[mine, jf], nl::load(scratch[mine, jf]));
        return out;
      },
      {"a"});
  const nki::Tensor a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 3));
  const nki::LaunchResult r = k[nl::nc(2)].with(checked()).run({a});
  CHECK(r.outputs.front().to_floats()[300] == a.to_floats()[300] * 3);
}
