/**
 * \file my_kernels: a kernel of your own, registered beside nki-cpp's library kernels.
 *
 *   my_kernels demo                       runs scaled_add on generated data and checks it
 *   my_kernels list | run | profile ...   the `nki` command, with scaled_add among its kernels
 *   my_kernels bench scaled_add_tiled ... a sweep of its tunable form's tile rows, R
 */
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nki/cli.h>
#include <nki/kernels.h>
#include <nki/nki.h>

namespace nl = nki::language;

namespace {

/** c = 2 * a + b over [P, F] tensors, one [rows, F] row tile per instance. */
nki::Kernel scaled_add_kernel(const std::string& name, std::int64_t rows) {
  return nki::jit(
      name,
      [rows](nl::tensor a, nl::tensor b) {
        auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "c");
        auto ix = nl::program_id(0) * rows + nl::arange(rows)[nl::_, nl::newaxis];
        auto iy = nl::arange(a.shape()[1])[nl::newaxis, nl::_];
        nl::store(c[ix, iy], nl::load(a[ix, iy]) * 2.0f + nl::load(b[ix, iy]));
        return c;
      },
      {"a", "b"});
}

/** The grid [P / rows]: one instance per row tile; other shapes are the user's error, named. */
nki::GridSpec scaled_add_grid(const std::vector<nki::Shape>& shapes, std::int64_t rows) {
  if (shapes.size() != 2 || shapes[0] != shapes[1] || shapes[0].size() != 2 || shapes[0][0] % rows != 0)
    throw nki::UserError("err_input_shape_not_tiled", "scaled_add", {},
                         "inputs must be two [P, F] arrays, P a multiple of " + std::to_string(rows));
  return nki::GridSpec{{nki::GridAxis(shapes[0][0] / rows)}};
}

const nki::Kernel scaled_add = scaled_add_kernel("scaled_add", 128);

/** scaled_add with the rows of a tile as a parameter: `nki bench` sweeps R, `--autotune` runs the best. */
nki::TunableKernel scaled_add_tiled() {
  nki::TunableKernel k;
  k.name = "scaled_add_tiled";
  k.description = "scaled_add in [R, F] row tiles, grid [P/R]; R tunable";
  k.params = {{"R", "rows (partitions) of a tile", {32, 64, 128}, 128}};
  k.make = [](const nki::TuningConfig& c) { return scaled_add_kernel("scaled_add_r" + std::to_string(c.at("R")), c.at("R")); };
  k.grid = [](const nki::TuningConfig& c, const std::vector<nki::Shape>& shapes) { return scaled_add_grid(shapes, c.at("R")); };
  // Every R here fits the 128 partitions; a kernel with larger tiles says why a configuration cannot run.
  k.forbidden = [](const nki::TuningConfig&, const std::vector<nki::TensorSpec>&,
                   const nki::sim::TargetSpec&) -> std::optional<std::string> { return std::nullopt; };
  return k;
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
  registry.add({"scaled_add", "c = 2 * a + b, [128, F] row tiles, grid [P/128]", scaled_add,
                [](const std::vector<nki::Shape>& shapes) { return scaled_add_grid(shapes, 128); }});
  registry.add_tunable(scaled_add_tiled());
  return nki::cli::run(argc, argv, registry, std::cout, std::cerr);
}
