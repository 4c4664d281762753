/**
 * \file The host layout of on-chip tensors (OnChipLayout): SBUF and PSUM partitions a multiple of
 * 512 bytes long are padded by a 64-byte cache line; everything else is row-major; and the padded
 * layouts give the interpreter's bits (wrapped blocks, fills, reads down the partitions).
 */
#include "language/lang_support.h"
#include "nki/kernels.h"
#include "nki/traced_kernel.h"
#include "on_chip_layout.h"

namespace nl = nki::language;
namespace ncc = nki::compiler;
using nki::DType;
using Strides = std::vector<std::int64_t>;

namespace {

int tensor_named(const nki::ir::KernelIR& k, const std::string& name) {
  for (const nki::ir::TensorDecl& t : k.tensors)
    if (t.name == name) return t.id;
  FAIL("no tensor named " << name);
  return -1;
}

}  // namespace

TEST_CASE("matmul_fully_optimized's on-chip tensors: 512-byte-multiple partitions padded by 64 bytes, HBM row-major") {
  const nki::Shape s{2048, 2048};
  const auto traced = nki::kernels::matmul_fully_optimized(nki::kernels::MatmulBlocks{})
                          .trace({s, s}, {DType::bf16, DType::bf16}, nki::parse_grid("spmd_dim(1,nc(2))"));
  const nki::ir::KernelIR& k = *traced->ir;
  const nki::OnChipLayout layout(k);
  // rhs_tiles [8, par 128, 1024] bf16: 2048-byte partitions, 2112 apart.
  const int rhs = tensor_named(k, "rhs_tiles");
  CHECK(layout.strides(rhs) == Strides{128 * 1056, 1056, 1});
  CHECK(layout.elements(rhs) == 8 * 128 * 1056);
  // lhsT_tiles [8, par 128, 2048] bf16: 4096-byte partitions.
  CHECK(layout.strides(tensor_named(k, "lhsT_tiles")) == Strides{128 * 2080, 2080, 1});
  // res_tile [par 128, 512] fp32 in PSUM: 2048-byte partitions.
  CHECK(layout.strides(tensor_named(k, "res_tile")) == Strides{528, 1});
  // result_tiles [1, 16, 2, par 128, 512] bf16: the dimensions before the partitions over padded ones.
  CHECK(layout.strides(tensor_named(k, "result_tiles")) == Strides{16 * 2 * 128 * 544, 2 * 128 * 544, 128 * 544, 544, 1});
  // The arguments and the result in HBM: row-major.
  CHECK(layout.strides(tensor_named(k, "lhsT")) == Strides{2048, 1});
  CHECK(layout.strides(tensor_named(k, "result")) == Strides{2048, 1});
  CHECK(layout.elements(tensor_named(k, "result")) == 2048 * 2048);
}

TEST_CASE("partitions not a multiple of 512 bytes, and a collective's on-chip operands, stay row-major") {
  const nki::Kernel kernel = nki::jit("layout_kinds", [](nl::tensor x) {
    auto out = nl::ndarray({128, 128}, DType::fp32, nl::shared_hbm, "out");
    auto odd = nl::ndarray({nl::par_dim(128), 100}, DType::fp32, nl::sbuf, "odd");      // 400 bytes
    auto quarter = nl::ndarray({nl::par_dim(128), 128}, DType::fp32, nl::sbuf, "quarter");  // 512 bytes
    auto mine = nl::ndarray({nl::par_dim(128), 128}, DType::fp32, nl::sbuf, "mine");
    auto sum = nl::ndarray({nl::par_dim(128), 128}, DType::fp32, nl::sbuf, "sum");
    odd[nl::_, nl::_] = nl::load(x[nl::_, nl::ds(0, 100)]);
    quarter[nl::_, nl::_] = nl::load(x.all());
    mine[nl::_, nl::_] = nl::load(x.all());
    nki::collectives::all_reduce({mine}, {sum}, {}, nl::add);
    nl::store(out.all(), nl::copy(sum[nl::_, nl::_]) + quarter[nl::_, nl::_]);
    return out;
  });
  const auto traced = kernel.trace({{128, 128}}, {DType::fp32}, nki::GridSpec{});
  const nki::ir::KernelIR& k = *traced->ir;
  const nki::OnChipLayout layout(k);
  CHECK(layout.strides(tensor_named(k, "odd")) == Strides{100, 1});
  CHECK(layout.strides(tensor_named(k, "quarter")) == Strides{144, 1});
  CHECK(layout.elements(tensor_named(k, "quarter")) == 128 * 144);
  CHECK(layout.strides(tensor_named(k, "mine")) == Strides{128, 1});
  CHECK(layout.strides(tensor_named(k, "sum")) == Strides{128, 1});
}

TEST_CASE("padded partitions give the interpreter's bits: wrapped blocks, a fill, a column block read down the partitions") {
  // buf [4, par 128, 256] fp32 (1 KiB partitions, padded) placed in 2 physical blocks: blocks 0
  // and 1 hold what 2 and 3 wrote. acc = full(0.5) [par 128, 512] fp32 in PSUM, one column block
  // of it updated; out = buf[j] + acc's first 256 columns, then acc's last 256 columns.
  const nki::Kernel kernel = nki::jit("padded_partitions", [](nl::tensor a) {
    auto out = nl::ndarray({5 * 128, 256}, DType::fp32, nl::shared_hbm, "out");
    auto buf = nl::ndarray({4, nl::par_dim(128), 256}, DType::fp32, ncc::sbuf::mod_alloc({.base_addr = 0, .num_free_tiles = {2}}),
                           "buf");
    auto acc = nl::full({nl::par_dim(128), 512}, 0.5, DType::fp32, nl::psum, "acc");
    for (auto i : nl::sequential_range(4)) buf[i, nl::_, nl::_] = nl::load(a[nl::ds(i * 128, 128), nl::_]);
    acc[nl::_, nl::ds(256, 32)] = acc[nl::_, nl::ds(256, 32)] + buf[3, nl::_, nl::ds(0, 32)];
    for (auto j : nl::sequential_range(4))
      nl::store(out[nl::ds(j * 128, 128), nl::_], buf[j, nl::_, nl::_] + acc[nl::_, nl::ds(0, 256)]);
    nl::store(out[nl::ds(4 * 128, 128), nl::_], nl::copy(acc[nl::_, nl::ds(256, 256)]));
    return out;
  });
  const std::int64_t f = 256;
  const nki::Tensor a = lt::make({512, f}, DType::fp32, lt::random_ints(static_cast<std::size_t>(512 * f), 73, -50, 50));
  const std::vector<float> av = a.to_floats();
  std::vector<double> want(static_cast<std::size_t>(5 * 128 * f));
  const auto at = [&](std::int64_t row, std::int64_t col) { return av[static_cast<std::size_t>(row * f + col)]; };
  for (std::int64_t j = 0; j < 4; ++j) {
    const std::int64_t src = 2 + j % 2;  // the last block written into block j's memory
    for (std::int64_t p = 0; p < 128; ++p)
      for (std::int64_t c = 0; c < f; ++c)
        want[static_cast<std::size_t>((j * 128 + p) * f + c)] = at(src * 128 + p, c) + 0.5;
  }
  for (std::int64_t p = 0; p < 128; ++p)
    for (std::int64_t c = 0; c < f; ++c)
      want[static_cast<std::size_t>((4 * 128 + p) * f + c)] = c < 32 ? 0.5 + at(3 * 128 + p, c) : 0.5;
  lt::check_both(kernel, lt::no_grid(), {a}, want, "padded_partitions");
}
