/**
 * \file Misuses of engine=, reduce_res and reduce_cmd, NKI-order tensor_reduce axes, the Vector
 * transpose and shared constants: each names its error, the kernel, the line and the values.
 */
#include <functional>

#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {
const char* kFile = "tests/error/isa_engine_and_reduce_res_errors_test.cpp";
nki::Tensor input(std::int64_t p = 128, std::int64_t f = 64) {
  return nki::Tensor::from_floats({p, f}, nki::DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 7));
}
/** Runs `f` (whose trace sets `line`), then checks its error against KERNEL (FILE:LINE + offset): rest. */
void check_error(const std::function<void()>& f, const char* kernel, const int& line, int offset, const std::string& rest) {
  const std::string msg = test::user_error_of(f);
  CHECK(msg == fmt::format("{} ({}:{}): {}", kernel, kFile, line + offset, rest));
}
}  // namespace

TEST_CASE("err_unsupported_engine - tensor_tensor on the Scalar engine, tensor_copy on the Tensor engine") {
  static int line = 0;
  const nki::Kernel k = nki::jit("tt_scalar", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    nl::store(out.all(), isa::tensor_tensor(x, x, nl::add, {.engine = isa::scalar_engine}));
    return out;
  });
  check_error([&] { k(input()); }, "tt_scalar", line, 0,
              "err_unsupported_engine: isa::tensor_tensor cannot run on the scalar engine; it runs on the Vector or "
                 "GpSimd engine");
  const nki::Kernel c = nki::jit("copy_tensor", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    nl::store(out.all(), isa::tensor_copy(x, {.engine = isa::tensor_engine}));
    return out;
  });
  check_error([&] { c(input()); }, "copy_tensor", line, 0,
              "err_unsupported_engine: isa::tensor_copy cannot run on the tensor engine; it runs on the Vector, "
                 "Scalar or GpSimd engine");
}

TEST_CASE("err_unsupported_engine - tensor_scalar on the Scalar engine does multiply, add, multiply then add only") {
  static int line = 0;
  const nki::Kernel k = nki::jit("ts_scalar", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    nl::store(out.all(), isa::tensor_scalar(x, nl::add, 1.0, nl::multiply, 2.0, {.engine = isa::scalar_engine}));
    return out;
  });
  check_error([&] { k(input()); }, "ts_scalar", line, 0,
              "err_unsupported_engine: isa::tensor_scalar on the Scalar engine with op0 add and op1 multiply: the "
                 "Scalar engine does multiply, add, or multiply then add; use the Vector engine");
}

TEST_CASE("err_unsupported_memory - GpSimd cannot read PSUM") {
  static int line = 0;
  const nki::Kernel k = nki::jit("gpsimd_psum", [](nl::tensor a) {
    auto out = nl::ndarray({64, 64}, a.dtype(), nl::shared_hbm);
    auto x = nl::load(a[nl::ds(0, 64), nl::ds(0, 64)]);
    auto t = isa::nc_transpose(x);  // PSUM
    line = __LINE__ + 1;
    nl::store(out.all(), isa::tensor_copy(t, {.engine = isa::gpsimd_engine}));
    return out;
  });
  check_error([&] { k(input()); }, "gpsimd_psum", line, 0,
              "err_unsupported_memory: isa::tensor_copy on the GpSimd engine reads tile %t1 in PSUM; GpSimd cannot "
                 "access PSUM, use the Vector or Scalar engine");
}

TEST_CASE("err_unsupported_reduce_cmd, err_invalid_reduce_res and err_unsupported_reduction_op of activation") {
  static int line = 0;
  auto kernel = [](int which) {
    return nki::jit("act_reduce", [which](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
      auto sums = nl::ndarray({nl::par_dim(128), 1}, nl::float32, nl::sbuf);
      auto x = nl::load(a.all());
      nl::tile y(-1);
      line = __LINE__ + 2;
      if (which == 0)
        y = isa::activation(nl::exp, x, 0.0, 1.0, {.reduce_op = nl::add, .reduce_res = sums[nl::_, nl::_], .reduce_cmd = isa::reduce_cmd::reduce});
      else if (which == 1)
        y = isa::activation(nl::exp, x, 0.0, 1.0, {.reduce_op = nl::add});
      else
        y = isa::activation(nl::exp, x, 0.0, 1.0, {.reduce_op = nl::maximum, .reduce_res = sums[nl::_, nl::_], .reduce_cmd = isa::reduce_cmd::reset_reduce});
      nl::store(out.all(), y);
      return out;
    });
  };
  check_error([&] { kernel(0)(input()); }, "act_reduce", line, 0,
              "err_unsupported_reduce_cmd: isa::activation with reduce_res and reduce_cmd reduce: only reset_reduce "
                 "(registers reset, this instruction's sum written out) is supported; state kept across instructions "
                 "is not");
  check_error([&] { kernel(1)(input()); }, "act_reduce", line, 2,
              "err_invalid_reduce_res: isa::activation: reduce_op and reduce_res go together; got reduce_op without "
                 "reduce_res");
  check_error([&] { kernel(2)(input()); }, "act_reduce", line, 4,
              "err_unsupported_reduction_op: isa::activation reduces with nl::add only; got reduce_op maximum");
}

TEST_CASE("reduce_res must be a [P, 1] on-chip tile with the data's partitions") {
  static int line = 0;
  auto kernel = [](int which) {
    return nki::jit("tsr_res", [which](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
      auto wide = nl::ndarray({nl::par_dim(128), 4}, nl::float32, nl::sbuf, "wide");
      auto few = nl::ndarray({nl::par_dim(64), 1}, nl::float32, nl::sbuf, "few");
      auto x = nl::load(a.all());
      nl::tile y(-1);
      line = __LINE__ + 2;
      if (which == 0)
        y = isa::tensor_scalar_reduce(x, nl::multiply, 2.0, nl::add, wide[nl::_, nl::ds(0, 2)]);
      else if (which == 1)
        y = isa::tensor_scalar_reduce(x, nl::multiply, 2.0, nl::add, few[nl::_, nl::_]);
      else
        y = isa::tensor_scalar_reduce(x, nl::multiply, 2.0, nl::add, out[nl::ds(0, 128), nl::ds(0, 1)]);
      nl::store(out.all(), y);
      return out;
    });
  };
  check_error([&] { kernel(0)(input()); }, "tsr_res", line, 0,
              "err_free_dim_mismatch: isa::tensor_scalar_reduce: reduce_res is a [128, 1] tile (one element per "
                 "partition), got [128,2] of tensor wide");
  check_error([&] { kernel(1)(input()); }, "tsr_res", line, 2,
              "err_num_partition_mismatch: isa::tensor_scalar_reduce: reduce_res [64,1] of tensor few has 64 "
                 "partitions; the data has 128");
  check_error([&] { kernel(2)(input()); }, "tsr_res", line, 4,
              "err_unsupported_memory: isa::tensor_scalar_reduce: reduce_res is tensor tensor1 in shared_hbm; it "
                 "must be an SBUF or PSUM tile");
}

TEST_CASE("err_unsupported_reduction_op - tensor_scalar_reduce with subtract") {
  static int line = 0;
  const nki::Kernel k = nki::jit("tsr_op", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto r = nl::ndarray({nl::par_dim(128), 1}, nl::float32, nl::sbuf);
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    nl::store(out.all(), isa::tensor_scalar_reduce(x, nl::add, 1.0, nl::subtract, r[nl::_, nl::_]));
    return out;
  });
  check_error([&] { k(input()); }, "tsr_op", line, 0,
              "err_unsupported_reduction_op: isa::tensor_scalar_reduce with reduce op subtract; supported are add, "
                 "maximum, minimum");
}

TEST_CASE("err_unsupported_reduction_axis - NKI-order tensor_reduce reduces the last free axes only") {
  static int line = 0;
  const nki::Kernel k = nki::jit("reduce_axes", [](nl::tensor a) {
    auto out = nl::ndarray({128, 8}, a.dtype(), nl::shared_hbm);
    auto buf = nl::ndarray({nl::par_dim(128), 4, 8}, nl::float32, nl::sbuf, "buf");
    buf.all() = 1.0;
    line = __LINE__ + 1;
    nl::store(out.all(), isa::tensor_reduce(nl::add, buf, 1));
    return out;
  });
  check_error([&] { k(input()); }, "reduce_axes", line, 0,
              "err_unsupported_reduction_axis: isa::tensor_reduce over axes (1) of a tile of shape [128,4,8]: the "
                 "axes must be the last free axes, a contiguous run ending at axis 2");
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - the Vector engine transposes at most [32, 32]") {
  static int line = 0;
  const nki::Kernel k = nki::jit("vector_transpose", [](nl::tensor a) {
    auto out = nl::ndarray({64, 64}, a.dtype(), nl::shared_hbm);
    auto x = nl::load(a[nl::ds(0, 64), nl::ds(0, 64)]);
    line = __LINE__ + 1;
    nl::store(out.all(), isa::nc_transpose(x, {.engine = isa::vector_engine}));
    return out;
  });
  check_error([&] { k(input()); }, "vector_transpose", line, 0,
              "err_size_of_dimension_exceed_arch_limit: isa::nc_transpose on the Vector engine of a tile of shape "
                 "[64,64]: the Vector engine transposes at most [32, 32]; use the Tensor engine");
}

TEST_CASE("shared constants: the value count, the kernel level, and no store into one") {
  static int line = 0;
  auto kernel = [](int which) {
    return nki::jit("constants", [which](nl::tensor a) {
      auto out = nl::ndarray({2, 2}, a.dtype(), nl::shared_hbm);
      line = __LINE__ + 2;
      if (which == 0) {
        auto c = nl::shared_constant({2, 2}, {1, 2, 3}, nl::float32);
        nl::store(out.all(), nl::load(c));
      } else if (which == 1) {
        for (auto i : nl::affine_range(2)) {
          auto c = nl::shared_constant({1, 2}, {1, 2}, nl::float32);
          nl::store(out[i, nl::_], nl::load(c));
        }
      } else {
        auto c = nl::shared_constant({2, 2}, {1, 0, 0, 1}, nl::float32);
        nl::store(c.all(), nl::load(a[nl::ds(0, 2), nl::ds(0, 2)]));
        nl::store(out.all(), nl::load(c));
      }
      return out;
    });
  };
  check_error([&] { kernel(0)(input()); }, "constants", line, 0,
              "err_invalid_shape: nl::shared_constant of shape [2,2] needs 4 values, got 3");
  check_error([&] { kernel(1)(input()); }, "constants", line, 4,
              "err_shared_hbm_must_in_kernel_level: nl::shared_constant inside a loop; constants live in shared HBM "
                 "and are created at the top level of the kernel");
  check_error([&] { kernel(2)(input()); }, "constants", line, 9,
              "err_unsupported_memory: nl::store into tensor tensor2, a shared constant: constants are read-only");
}
