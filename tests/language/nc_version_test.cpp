/** \file isa::get_nc_version and get_nc_sub_version: the target's generation, and what asking does to the trace. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

// Scales its input by the generation number of the target it is traced for.
nki::Kernel scale_by_generation() {
  return nki::jit("scale_by_generation", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    const int gen = static_cast<int>(isa::get_nc_version()) * 10 + isa::get_nc_sub_version();
    nl::store(out.all(), nl::multiply(nl::load(x.all()), static_cast<float>(gen)));
    return out;
  });
}

}  // namespace

TEST_CASE("isa::get_nc_version is the generation of the launch's target: gen2 trn1 and inf2, gen3 trn2, gen4 trn3") {
  const nki::Kernel k = scale_by_generation();
  const std::vector<float> xv = test::random_floats(16 * 8, 5);
  for (const auto& [target, gen] : {std::pair{"trn1", 20}, {"inf2", 20}, {"trn2", 30}, {"trn3", 40}}) {
    const nki::sim::Device device(target, 1);
    const nki::Tensor x = nki::Tensor::from_floats({16, 8}, DType::fp32, xv, device);
    std::vector<double> want(xv.size());
    for (std::size_t i = 0; i < xv.size(); ++i) want[i] = lt::fmul(xv[i], static_cast<float>(gen));
    lt::check_both(k, lt::no_grid(), {x}, want, target);
  }
}

TEST_CASE("a kernel that asks for the nc_version is traced per generation, one that does not shares its trace") {
  const nki::Kernel asks = scale_by_generation();
  const nki::Kernel plain = nki::jit("plain_copy", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(x.all()));
    return out;
  });
  const nki::sim::Device trn1("trn1", 1), trn2("trn2", 1);
  const std::vector<float> xv = test::random_floats(8 * 4, 6);
  const nki::Tensor x1 = nki::Tensor::from_floats({8, 4}, DType::fp32, xv, trn1);
  const nki::Tensor x2 = nki::Tensor::from_floats({8, 4}, DType::fp32, xv, trn2);
  const nki::LaunchResult a1 = lt::run_on(asks, lt::no_grid(), nki::Executor::reference, {x1});
  const nki::LaunchResult a2 = lt::run_on(asks, lt::no_grid(), nki::Executor::reference, {x2});
  CHECK(a1.ir_text.find("  traced for nc_version gen2\n") != std::string::npos);
  CHECK(a2.ir_text.find("  traced for nc_version gen3\n") != std::string::npos);
  CHECK(a1.ir_hash != a2.ir_hash);
  const nki::LaunchResult p1 = lt::run_on(plain, lt::no_grid(), nki::Executor::reference, {x1});
  const nki::LaunchResult p2 = lt::run_on(plain, lt::no_grid(), nki::Executor::reference, {x2});
  CHECK(p1.ir_text.find("nc_version") == std::string::npos);
  CHECK(p1.ir_hash == p2.ir_hash);
}

TEST_CASE("isa::get_nc_version outside a kernel is err_outside_kernel") {
  const std::string msg = test::user_error_of([] { (void)isa::get_nc_version(); });
  CHECK(msg.find("err_outside_kernel: nl::get_nc_version was called outside a kernel") != std::string::npos);
}
