/**
 * \file my_kernels: a Python module with a kernel of your own beside nki-cpp's library kernels.
 *
 *   import my_kernels
 *   s, d = my_kernels.run("sum_and_difference", a, b, dtype="fp32")
 */
#include <nki/cli.h>
#include <nki/nki.h>
#include <nki/python.h>

#include <tuple>

namespace nl = nki::language;

namespace {

/** s = a + b and d = a - b over [P, F] tensors, one [128, F] row tile per instance: two outputs. */
const nki::Kernel sum_and_difference = nki::jit(
    "sum_and_difference",
    [](nl::tensor a, nl::tensor b) {
      auto s = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "s");
      auto d = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "d");
      auto ix = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
      auto iy = nl::arange(a.shape()[1])[nl::newaxis, nl::_];
      auto x = nl::load(a[ix, iy]);
      auto y = nl::load(b[ix, iy]);
      nl::store(s[ix, iy], x + y);
      nl::store(d[ix, iy], x - y);
      return std::make_tuple(s, d);
    },
    {"a", "b"});

/** The grid [P / 128]; other shapes are the user's error, named. */
nki::GridSpec row_tiles(const std::vector<nki::Shape>& shapes) {
  if (shapes.size() != 2 || shapes[0] != shapes[1] || shapes[0].size() != 2 || shapes[0][0] % 128 != 0)
    throw nki::UserError("err_input_shape_not_tiled", "sum_and_difference", {},
                         "inputs must be two [P, F] arrays of one shape, P a multiple of 128");
  return nki::GridSpec{{nki::GridAxis(shapes[0][0] / 128)}};
}

const nki::KernelRegistry& my_registry() {
  static const nki::KernelRegistry registry = [] {
    nki::KernelRegistry r;
    nki::cli::register_library_kernels(r);
    r.add({"sum_and_difference", "s = a + b and d = a - b, [128, F] row tiles, grid [P/128]", sum_and_difference,
           row_tiles});
    return r;
  }();
  return registry;
}

}  // namespace

PYBIND11_MODULE(my_kernels, m) { nki::python::define_module(m, my_registry()); }
