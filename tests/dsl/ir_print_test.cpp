/** \file The canonical IR text of a traced kernel (the compile-cache key) and its hash. */
#include "nki/traced_kernel.h"
#include "nki/ir/passes.h"
#include "nki/kernels.h"
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("tensor_add traces to this canonical text") {
  auto a = nki::Tensor::from_floats({512, 2048}, nki::DType::bf16, test::random_floats(512 * 2048, 1));
  auto traced = nki::kernels::tensor_add().trace({a.shape(), a.shape()}, {a.dtype(), a.dtype()},
                                                 nki::parse_grid("spmd_dim(2,nc(2)),4"));
  CHECK(traced->text ==
        "kernel tensor_add (grid rank 2)\n"
        "  tensor %a : bf16[512,2048] hbm_input\n"
        "  tensor %b : bf16[512,2048] hbm_input\n"
        "  tensor %tensor2 : bf16[512,2048] shared_hbm\n"
        "  %t0 = load %a[128*pid0 + i0, 512*pid1 + i1] : bf16[128,512]\n"
        "  %t1 = load %b[128*pid0 + i0, 512*pid1 + i1] : bf16[128,512]\n"
        "  %t2 = add %t0, %t1 : bf16[128,512]\n"
        "  store %tensor2[128*pid0 + i0, 512*pid1 + i1], %t2\n"
        "  return %tensor2\n");
  CHECK(traced->hash == nki::ir::hash_text(traced->text));
  CHECK(traced->hash.size() == 16);
}

TEST_CASE("the text holds no grid sizes, so grids of one rank share it, while dtypes and shapes change it") {
  const auto& k = nki::kernels::tensor_add();
  const nki::Shape s{256, 1024};
  auto t1 = k.trace({s, s}, {nki::DType::bf16, nki::DType::bf16}, nki::parse_grid("2,2"));
  auto t2 = k.trace({s, s}, {nki::DType::bf16, nki::DType::bf16}, nki::parse_grid("nc(2),2"));
  auto t3 = k.trace({s, s}, {nki::DType::fp32, nki::DType::fp32}, nki::parse_grid("2,2"));
  auto t4 = k.trace({{256, 512}, {256, 512}}, {nki::DType::bf16, nki::DType::bf16}, nki::parse_grid("2,1"));
  CHECK(t1->text == t2->text);
  CHECK(t1->text != t3->text);
  CHECK(t1->text != t4->text);
  CHECK(t1->hash != t3->hash);
}

TEST_CASE("index expressions print with signs, coefficients and constants") {
  using nki::ir::IndexExpr;
  using nki::ir::Sym;
  IndexExpr e = nki::ir::add(IndexExpr::symbol({Sym::Kind::program_id, 0}, 128), IndexExpr::constant_of(-3));
  CHECK(nki::ir::to_string(e) == "128*pid0 - 3");
  CHECK(nki::ir::to_string(nki::ir::scale(e, -1)) == "-128*pid0 + 3");
  CHECK(nki::ir::to_string(IndexExpr::constant_of(0)) == "0");
  CHECK(nki::ir::to_string(nki::ir::add(e, nki::ir::scale(e, -1))) == "0");
}
