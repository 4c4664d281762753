/**
 * \file NKI's attention-forward tutorial, every version: both executors byte-identical, allclose
 * to the tutorial's float64 reference (numpy_attention) at the smallest seqlen the version takes.
 */
#include "kernel_check.h"
#include "nki/attention_kernels.h"

namespace nk = nki::kernels;
using nki::DType;

namespace {

/**
 * fp32 versions: rtol 1e-3 (atol 1e-5 for outputs near zero). Versions that round scores or the
 * output to bf16 (8 significant bits) are off by up to about 1.2e-3 here (measured: rtol 1e-3
 * with atol 1e-3 fails): the tutorial's own check, atol 1e-2.
 */
kt::ref::Tolerance tolerance(const nk::AttentionVersion& a) {
  return a.bf16_inside ? kt::ref::Tolerance{1e-2, 1e-3} : kt::ref::Tolerance{1e-5, 1e-3};
}

}  // namespace

TEST_CASE("attention tutorial - every version matches softmax(q^T k) v^T in fp32, both executors") {
  for (const nk::AttentionVersion& a : nk::attention_versions()) {
    CAPTURE(std::string(a.name));
    const std::int64_t d = 128, n = a.min_seqlen;
    // The tutorial's inputs: uniform in [-1, 1].
    const nki::Tensor q = kt::input({d, n}, DType::fp32, 401, -1.0f, 1.0f);
    const nki::Tensor k = kt::input({d, n}, DType::fp32, 402, -1.0f, 1.0f);
    const nki::Tensor v = kt::input({d, n}, DType::fp32, 403, -1.0f, 1.0f);
    const auto want = kt::ref::attention_forward(q.to_values(), k.to_values(), v.to_values(), d, n);
    const nki::Tensor out =
        kt::check_kernel(a.kernel(), nk::attention_grid(a.name, {q.shape(), k.shape(), v.shape()}), {q, k, v}, want,
                         tolerance(a));
    CHECK(out.shape() == nki::Shape{n, d});
  }
}

TEST_CASE("attention tutorial - the tiled versions at seqlen 1024" * doctest::skip(test::sanitized_build())) {
  // (v3 keeps a [128, 512] PSUM block per q tile and kv block in one array: at 1024 that is more
  // than PSUM's 16 KiB per partition, err_size_of_dimension_exceed_arch_limit.)
  for (const char* name : {"attn_fwd_v4", "attn_fwd_v8", "attn_fwd_v9", "attn_fwd_v11"}) {
    CAPTURE(std::string(name));
    const nk::AttentionVersion* a = nullptr;
    for (const nk::AttentionVersion& x : nk::attention_versions())
      if (std::string(x.name) == name) a = &x;
    REQUIRE(a != nullptr);
    const std::int64_t d = 128, n = 1024;
    const nki::Tensor q = kt::input({d, n}, DType::fp32, 411, -1.0f, 1.0f);
    const nki::Tensor k = kt::input({d, n}, DType::fp32, 412, -1.0f, 1.0f);
    const nki::Tensor v = kt::input({d, n}, DType::fp32, 413, -1.0f, 1.0f);
    const auto want = kt::ref::attention_forward(q.to_values(), k.to_values(), v.to_values(), d, n);
    kt::check_kernel(a->kernel(), nk::attention_grid(name, {q.shape(), k.shape(), v.shape()}), {q, k, v}, want,
                     tolerance(*a));
  }
}

TEST_CASE("attention tutorial - the launch checks the tutorial's asserts") {
  CHECK(test::user_error_of([] { nk::attention_grid("attn_fwd_v4", {{128, 512}, {128, 512}, {128, 256}}); }) ==
        "attn_fwd_v4: err_input_shape_mismatch: q [128,512], k [128,512] and v [128,256] must be one shape "
        "[d_head, seqlen] with d_head = 128");
  CHECK(test::user_error_of([] { nk::attention_grid("attn_fwd_v4", {{128, 640}, {128, 640}, {128, 640}}); }) ==
        "attn_fwd_v4: err_input_shape_not_tiled: q [128,640]: seqlen must be a positive multiple of 512");
  CHECK(test::user_error_of([] { nk::attention_grid("attn_fwd_v1", {{128, 512}, {128, 512}, {128, 512}}); }) ==
        "attn_fwd_v1: err_input_shape_not_tiled: q [128,512]: this version computes one tile, seqlen must be 128");
}

TEST_CASE("attention tutorial - every version passes checked mode: no read of an element nothing wrote, no race" *
          doctest::skip(test::sanitized_build())) {
  for (const nk::AttentionVersion& a : nk::attention_versions()) {
    CAPTURE(std::string(a.name));
    const std::int64_t d = 128, n = a.min_seqlen;
    const nki::Tensor q = kt::input({d, n}, DType::fp32, 421, -1.0f, 1.0f);
    const nki::Tensor k = kt::input({d, n}, DType::fp32, 422, -1.0f, 1.0f);
    const nki::Tensor v = kt::input({d, n}, DType::fp32, 423, -1.0f, 1.0f);
    const nki::GridSpec grid = nk::attention_grid(a.name, {q.shape(), k.shape(), v.shape()});
    nki::LaunchOptions checked;
    checked.checked = true;
    const nki::LaunchResult c = a.kernel().launch(grid).with(checked).run({q, k, v});
    const nki::LaunchResult h = a.kernel().launch(grid).with({nki::Executor::halide}).run({q, k, v});
    CHECK(test::first_difference(c.outputs.at(0), h.outputs.at(0)) < 0);  // checked mode computes the same bytes
  }
}

TEST_CASE("attention tutorial - v10 at seqlen 1024: the pipelined stages reuse their placed buffers" *
          doctest::skip(test::sanitized_build())) {
  // 8 q tiles on qk_sbuf's and sum_row_tiles' two tiles, 8 score blocks on scores_psum_t's 3 banks.
  const nk::AttentionVersion* a = nullptr;
  for (const nk::AttentionVersion& x : nk::attention_versions())
    if (std::string(x.name) == "attn_fwd_v10") a = &x;
  REQUIRE(a != nullptr);
  const std::int64_t d = 128, n = 1024;
  const nki::Tensor q = kt::input({d, n}, DType::fp32, 431, -1.0f, 1.0f);
  const nki::Tensor k = kt::input({d, n}, DType::fp32, 432, -1.0f, 1.0f);
  const nki::Tensor v = kt::input({d, n}, DType::fp32, 433, -1.0f, 1.0f);
  const auto want = kt::ref::attention_forward(q.to_values(), k.to_values(), v.to_values(), d, n);
  kt::check_kernel(a->kernel(), nk::attention_grid(a->name, {q.shape(), k.shape(), v.shape()}), {q, k, v}, want,
                   tolerance(*a));
}
