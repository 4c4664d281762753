/**
 * \file my_kernels: a kernel of your own, registered beside nki-cpp's library kernels.
 *
 *   my_kernels demo                       runs scaled_add on generated data and checks it
 *   my_kernels list | run | profile ...   the `nki` command, with scaled_add among its kernels
 */
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nki/cli.h>
#include <nki/kernels.h>
#include <nki/nki.h>

namespace nl = nki::language;

namespace {

/** c = 2 * a + b over [P, F] tensors, one [128, F] row tile per instance. */
const nki::Kernel scaled_add = nki::jit(
    "scaled_add",
    [](nl::tensor a, nl::tensor b) {
      auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "c");
      auto ix = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
      auto iy = nl::arange(a.shape()[1])[nl::newaxis, nl::_];
      nl::store(c[ix, iy], nl::load(a[ix, iy]) * 2.0f + nl::load(b[ix, iy]));
      return c;
    },
    {"a", "b"});

nki::GridSpec scaled_add_grid(const std::vector<nki::Shape>& shapes) {
  if (shapes.size() != 2 || shapes[0] != shapes[1] || shapes[0].size() != 2 || shapes[0][0] % 128 != 0)
    throw nki::UserError("err_input_shape_not_tiled", "scaled_add", {}, "inputs must be two [P, F] arrays, P a multiple of 128");
  return nki::GridSpec{{nki::GridAxis(shapes[0][0] / 128)}};
}

int demo() {
  const std::int64_t p = 256, f = 512;
  std::vector<float> av(p * f), bv(p * f);
  for (std::size_t i = 0; i < av.size(); ++i) {
    av[i] = static_cast<float>(i % 97) * 0.25f;
    bv[i] = static_cast<float>(i % 13) - 6.0f;
  }
  const nki::Tensor a = nki::Tensor::from_floats({p, f}, nl::float32, av);
  const nki::Tensor b = nki::Tensor::from_floats({p, f}, nl::float32, bv);
  const nki::Tensor c = scaled_add[p / 128](a, b);
  const std::vector<float> cv = c.to_floats();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < cv.size(); ++i) wrong += cv[i] != 2.0f * av[i] + bv[i];
  std::printf("scaled_add: %zu of %zu elements match\n", cv.size() - wrong, cv.size());
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "demo") return demo();
  nki::KernelRegistry registry;
  nki::cli::register_library_kernels(registry);
  registry.add({"scaled_add", "c = 2 * a + b, [128, F] row tiles, grid [P/128]", scaled_add, scaled_add_grid});
  return nki::cli::run(argc, argv, registry, std::cout, std::cerr);
}
