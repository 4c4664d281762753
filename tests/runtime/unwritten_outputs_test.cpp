/** \file LaunchOptions::find_unwritten: output elements no instance wrote, found without checked mode, counted and zeroed. */
#include <cstring>

#include "nki/nki.h"
#include "half_written_kernel.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

std::uint32_t bits(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

TEST_CASE("find_unwritten: both executors count the elements no instance wrote, name the first, and zero them") {
  std::vector<float> in(128 * 64);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 251) - 100.0f;
  // An input value that is the first marker's bits: copied to the output, it is written, not unwritten.
  const std::uint32_t marker = 0x7FA5A5A5u;
  std::memcpy(&in[5], &marker, 4);
  const nki::Tensor a = nki::Tensor::from_floats({128, 64}, nl::float32, in);
  for (const nki::Executor e : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(e));
    nki::LaunchOptions o;
    o.executor = e;
    o.find_unwritten = true;
    const nki::LaunchResult r = test::half_written_kernel().launch({}).with(o).run({a});
    REQUIRE(r.unwritten.size() == 1);
    CHECK(r.unwritten[0].output == 0);
    CHECK(r.unwritten[0].count == 64 * 64);
    CHECK(r.unwritten[0].first == 64 * 64);
    const std::vector<float> got = r.outputs[0].to_floats();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool written = i < 64 * 64;
      wrong += written ? bits(got[i]) != bits(in[i]) : bits(got[i]) != 0u;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("find_unwritten: a kernel that writes every element reports nothing, and off is today's launch") {
  const nki::Tensor x = nki::Tensor::from_floats({128, 512}, nl::float32, test::random_floats(128 * 512, 3));
  nki::LaunchOptions o;
  o.find_unwritten = true;
  const nki::LaunchResult r = nki::kernels::tensor_add().launch(nki::parse_grid("1,1")).with(o).run({x, x});
  CHECK(r.unwritten.empty());
  const nki::LaunchResult plain = test::half_written_kernel().launch({}).run({nki::Tensor::from_floats({128, 64}, nl::float32, std::vector<float>(128 * 64, 1.0f))});
  CHECK(plain.unwritten.empty());  // not asked for: not looked for
}
