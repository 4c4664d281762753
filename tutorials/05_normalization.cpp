/**
 * \file Tutorial 5: the normalizations, softmax, RMSNorm and LayerNorm, checked.
 *
 * Each reduces along the free axis, so 128 rows at a time sit on the 128 partitions and a tile
 * reduces its own rows (nl::sum / nl::max / nl::mean with keepdims give a [128, 1] column that
 * broadcasts back over the row). The row count need not be a multiple of 128: the last row tile
 * is masked (`i * 128 + ix < rows`), as NKI's RMSNorm tutorial does. Computation is in fp32
 * (loads convert with {.dtype = nl::float32}); the store rounds to the output dtype.
 *
 * Each kernel runs on one core and, with a launch grid spmd_dim(1, nc(2)), on both cores of a
 * trn2 logical core (half the row tiles each), and is compared with a host reference (allclose).
 */
#include <fmt/format.h>

#include "nki/kernel_references.h"
#include "nki/kernels.h"
#include "nki/nki.h"
#include "tutorial_check.h"

namespace nl = nki::language;
namespace nk = nki::kernels;
namespace ref = nki::kernels::reference;

namespace {

int check(const char* name, const nki::Kernel& k, const std::vector<nki::Tensor>& args, const std::vector<double>& want) {
  int failed = 0;
  for (const nki::GridSpec& grid : {nki::GridSpec{}, nki::GridSpec{{nl::spmd_dim(1, nl::nc(2))}}}) {
    const nki::LaunchResult r = k.launch(grid).run(args);
    fmt::print("{:<10} {} rows on {} core{}: ", name, args[0].shape()[0], r.cores.size(), r.cores.size() == 1 ? "" : "s");
    const std::vector<double> got = r.outputs.at(0).to_values();
    failed += tutorial::check_allclose({got.begin(), got.end()}, {want.begin(), want.end()}, 1e-5, 1e-3);
  }
  return failed;
}

}  // namespace

int main() {
  const std::int64_t rows = 250, d = 512;  // 250 rows: two row tiles, the second masked after row 121
  const nki::Tensor x = tutorial::random_tensor({rows, d}, nl::float32, -3.0f, 3.0f, 1);
  const nki::Tensor g = tutorial::random_tensor({1, d}, nl::float32, 0.5f, 1.5f, 2);
  const nki::Tensor g_vector = tutorial::random_tensor({d}, nl::float32, 0.5f, 1.5f, 2);  // rmsnorm's weight is [d]
  const nki::Tensor beta = tutorial::random_tensor({1, d}, nl::float32, -1.0f, 1.0f, 3);
  const std::vector<double> xv = x.to_values(), gv = g.to_values(), bv = beta.to_values();

  int failed = 0;
  failed += check("softmax", nk::softmax(), {x}, ref::softmax(xv, rows, d));
  failed += check("rmsnorm", nk::rmsnorm(), {x, g_vector}, ref::rmsnorm(xv, g_vector.to_values(), rows, d));
  failed += check("layernorm", nk::layernorm(), {x, g, beta}, ref::layernorm(xv, gv, bv, rows, d, nk::kLayernormEpsilon));
  if (failed != 0) {
    fmt::print("{} runs differ from the reference\n", failed);
    return 1;
  }
  fmt::print("all kernels: NKI and reference match\n");
  return 0;
}
