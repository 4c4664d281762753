/**
 * \file err_stored_loop_range: a loop range kept in a variable instead of iterated where it is
 * made. Its loop opens with the range and closes when the range is destroyed, so without the
 * check every statement in between would be traced into the loop without a word.
 */
#include "nki/dynamic_control.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

const char* kFile = "tests/error/err_stored_loop_range_test.cpp";

auto input() { return nki::Tensor::from_floats({512, 8}, nki::DType::fp32, test::random_floats(512 * 8, 1)); }

std::string error_of(const nki::Kernel& k) {
  const nki::Tensor a = input();
  return test::user_error_of([&] { (void)k(a); });
}

}  // namespace

TEST_CASE("err_stored_loop_range - a range stored, then statements before its for") {
  static int line = 0;
  const nki::Kernel k = nki::jit("stored_first", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto tiles = nl::affine_range(4);
    auto t = nl::load(a[nl::ds(0, 128), nl::_]);  // would be traced into the loop
    for (auto i : tiles) nl::store(out[nl::ds(i * 128, 128), nl::_], t);
    return out;
  });
  const std::string k_error = error_of(k);
  CHECK(k_error == fmt::format("stored_first ({}:{}): err_stored_loop_range: nl::affine_range is stored in a variable, "
                                   "not iterated where it is made: its loop opens with the range, so what follows would "
                                   "be traced into the loop; iterate a range where it is made: `for (auto i : "
                                   "nl::affine_range(...))`",
                                   kFile, line));
}

TEST_CASE("err_stored_loop_range - a statement after the for while the stored range lives on") {
  static int line = 0;
  const nki::Kernel k = nki::jit("stored_after", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto tiles = nl::sequential_range(3);
    for (auto i : tiles) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a[nl::ds(i * 128, 128), nl::_]));
    nl::store(out[nl::ds(384, 128), nl::_], nl::load(a[nl::ds(384, 128), nl::_]));  // would run 3 times
    return out;
  });
  const std::string k_error = error_of(k);
  CHECK(k_error == fmt::format("stored_after ({}:{}): err_stored_loop_range: something is traced after the for over "
                                   "this nl::sequential_range while the range lives on (it is stored in a variable): its "
                                   "loop closes only when the range is destroyed, so that would be traced into the loop; "
                                   "iterate a range where it is made: `for (auto i : nl::sequential_range(...))`",
                                   kFile, line));
}

TEST_CASE("err_stored_loop_range - a range iterated twice, and one never iterated") {
  static int line = 0;
  const nki::Kernel twice = nki::jit("iterated_twice", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto tiles = nl::affine_range(4);
    for (auto i : tiles) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a[nl::ds(i * 128, 128), nl::_]));
    for (auto i : tiles) (void)i;
    return out;
  });
  // The second for begins after the first ended: nothing was traced in between, so begin() itself refuses.
  const std::string twice_error = error_of(twice);
  CHECK(twice_error == fmt::format("iterated_twice ({}:{}): err_stored_loop_range: nl::affine_range is iterated a "
                                       "second time; a range traces one loop: make one for each for statement",
                                       kFile, line));
  static int unused_line = 0;
  const nki::Kernel unused = nki::jit("never_iterated", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    for (auto i : nl::affine_range(4)) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a[nl::ds(i * 128, 128), nl::_]));
    unused_line = __LINE__ + 1;
    [[maybe_unused]] auto spare = nl::affine_range(2);
    return out;
  });
  const std::string unused_error = error_of(unused);
  CHECK(unused_error == fmt::format("never_iterated ({}:{}): err_stored_loop_range: nl::affine_range is made but "
                                        "never iterated (stored in a variable?); iterate a range where it is made: `for "
                                        "(auto i : nl::affine_range(...))`",
                                        kFile, unused_line));
}

TEST_CASE("err_stored_loop_range - a dynamic_range stored in a variable") {
  static int line = 0;
  const nki::Kernel k = nki::jit("stored_dynamic", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto tiles = nl::dynamic_range(4);
    auto t = nl::load(a[nl::ds(0, 128), nl::_]);
    for (auto i : tiles) (void)i;
    nl::store(out[nl::ds(0, 128), nl::_], t);
    return out;
  });
  const std::string k_error = error_of(k);
  CHECK(k_error == fmt::format("stored_dynamic ({}:{}): err_stored_loop_range: nl::dynamic_range is stored in a "
                                   "variable, not iterated where it is made: its loop opens with the range, so what "
                                   "follows would be traced into the loop; iterate a range where it is made: `for (auto "
                                   "i : nl::dynamic_range(...))`",
                                   kFile, line));
}

TEST_CASE("a range stored and iterated at once, with nothing traced in between or after, traces as a range-for does") {
  const nki::Kernel k = nki::jit("stored_then_iterated", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    {
      auto tiles = nl::affine_range(4);
      for (auto i : tiles) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a[nl::ds(i * 128, 128), nl::_]));
    }
    return out;
  });
  const nki::Tensor a = input();
  CHECK(test::first_difference(k(a), a) == -1);
}
