/**
 * \file A launch's fresh HBM tensors never show an earlier tensor's bytes: they start zeroed
 * unless the kernel's plain stores provably write them whole (ir::stored_whole), in which case
 * the launch skips the zeroing.
 */
#include "half_written_kernel.h"
#include "nki/ir/passes.h"
#include "nki/kernels.h"
#include "nki/traced_kernel.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

/** ir::stored_whole of the kernel's output (its first) for these shapes and grid ("": none). */
bool output_stored_whole(const nki::Kernel& k, const std::vector<nki::Shape>& shapes, const std::string& grid) {
  const std::vector<nki::DType> dtypes(shapes.size(), nki::DType::fp32);
  const auto traced = k.trace(shapes, dtypes, grid.empty() ? nki::GridSpec{} : nki::parse_grid(grid));
  return traced->stored_whole.at(static_cast<std::size_t>(traced->ir->outputs.front()));
}

/** Rows [0, rows) of a [256, 8] output, one [rows/instances, 8] tile per instance; optionally masked. */
nki::Kernel row_writer(std::int64_t rows_per_instance, bool masked) {
  return nki::jit("row_writer", [=](nl::tensor a) {
    auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "c");
    auto i = nl::program_id(0) * rows_per_instance + nl::arange(rows_per_instance)[nl::_, nl::newaxis];
    auto j = nl::arange(8)[nl::newaxis, nl::_];
    if (masked) nl::store(c[i, j], nl::load(a[i, j]), {.mask = i < 256});
    else nl::store(c[i, j], nl::load(a[i, j]));
    return c;
  });
}

}  // namespace

TEST_CASE("ir::stored_whole: which outputs the stores provably cover") {
  // tensor_add's [128, 512] tiles over its [4, 2] grid cover [512, 1024].
  CHECK(output_stored_whole(nki::kernels::tensor_add(), {{512, 1024}, {512, 1024}}, "4,2"));
  // The benchmarked launch (bench/README.md): proven whole, so its launch zeroes nothing.
  CHECK(output_stored_whole(nki::kernels::tensor_add(), {{8192, 8192}, {8192, 8192}}, "spmd_dim(32,nc(2)),16"));
  // A grid one short leaves the last row of tiles unwritten.
  CHECK_FALSE(output_stored_whole(nki::kernels::tensor_add(), {{512, 1024}, {512, 1024}}, "3,2"));
  // Rows 64..127 are never written.
  CHECK_FALSE(output_stored_whole(test::half_written_kernel(), {{128, 64}}, ""));
  // Two instances of 128 rows cover 256; a masked store is not taken as proof even when it covers.
  CHECK(output_stored_whole(row_writer(128, false), {{256, 8}}, "2"));
  CHECK_FALSE(output_stored_whole(row_writer(128, true), {{256, 8}}, "2"));
  // Overlapping instances (a stride of 64 rows, 128 rows each) over 3 instances: rows 0..255 written.
  const nki::Kernel overlapping = nki::jit("overlapping_rows", [](nl::tensor a) {
    auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "c");
    auto i = nl::program_id(0) * 64 + nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(8)[nl::newaxis, nl::_];
    nl::store(c[i, j], nl::load(a[i, j]));
    return c;
  });
  CHECK(output_stored_whole(overlapping, {{256, 8}}, "3"));
  // A loop's iterations: four column tiles of 2 cover 8 columns, three do not.
  for (const std::int64_t tiles : {4, 3}) {
    const nki::Kernel columns = nki::jit("column_tiles", [tiles](nl::tensor a) {
      auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "c");
      auto i = nl::arange(128)[nl::_, nl::newaxis];
      for (auto t : nl::affine_range(tiles)) {
        auto j = t * 2 + nl::arange(2)[nl::newaxis, nl::_];
        nl::store(c[i, j], nl::load(a[i, j]));
      }
      return c;
    });
    CHECK(output_stored_whole(columns, {{128, 8}}, "") == (tiles == 4));
  }
}

TEST_CASE("an output element no instance wrote is 0, never the bytes an earlier tensor left in that HBM block") {
  nki::sim::Device chip("trn2", 2);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(std::string(nki::executor_name(ex)));
    const nki::Tensor a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, std::vector<float>(128 * 64, 1.0f), chip);
    {
      // An earlier tensor of the output's size, all 7s, freed: its block is the next one handed out.
      const nki::Tensor earlier = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, std::vector<float>(128 * 64, 7.0f), chip);
    }
    const nki::LaunchResult r = test::half_written_kernel().launch({}).with({ex, &chip}).run({a});
    const std::vector<float> c = r.outputs.front().to_floats();
    CHECK(c[64 * 64 - 1] == 1.0f);
    CHECK(c[64 * 64] == 0.0f);
    CHECK(c[128 * 64 - 1] == 0.0f);
  }
}
