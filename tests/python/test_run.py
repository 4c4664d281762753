"""nki_cpp.run and nki_cpp.kernels against numpy; the executors and checked mode agree."""
import pathlib
import re

import numpy as np
import pytest

import nki_cpp
from conftest import bf16, nki_command


def test_kernels_are_what_nki_list_lists():
    listed = {}
    for line in nki_command("list").splitlines():
        name, description = re.match(r"^(\S+)\s+(.*)$", line).groups()
        listed[name] = description
    assert nki_cpp.kernels() == listed
    assert nki_cpp.kernels()["tensor_add"] == "c = a + b, [128,512] tiles, grid [P/128, F/512] on one core"


def test_tensor_add_in_bf16_rounds_inputs_and_output_as_numpy_does(rng):
    a = rng.standard_normal((256, 1024), dtype=np.float32)
    b = rng.standard_normal((256, 1024), dtype=np.float32)
    c = nki_cpp.run("tensor_add", a, b)  # dtype="bf16" by default
    assert c.dtype == np.float32 and c.shape == (256, 1024)
    np.testing.assert_array_equal(c, bf16(bf16(a) + bf16(b)))


def test_float16_and_float64_inputs_are_converted_as_nki_run_converts(rng):
    a = rng.standard_normal((128, 512)).astype(np.float16)
    b = rng.standard_normal((128, 512))  # float64: narrowed to float32 first
    c = nki_cpp.run("tensor_add", a, b, dtype="fp32")
    np.testing.assert_array_equal(c, a.astype(np.float32) + b.astype(np.float32))


def test_integer_inputs_keep_their_dtype():
    a = np.arange(128 * 512, dtype=np.int32).reshape(128, 512) - 30000
    b = np.full((128, 512), 7, dtype=np.int64)  # int64 that fits: narrowed to int32
    c = nki_cpp.run("tensor_add", a, b)
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, a + 7)


def test_two_cores_a_grid_given_and_both_executors_agree(rng):
    a = rng.standard_normal((512, 1024), dtype=np.float32)
    b = rng.standard_normal((512, 1024), dtype=np.float32)
    want = a + b
    halide = nki_cpp.run("tensor_add_nc2", a, b, dtype="fp32", grid="spmd_dim(2,nc(2)),2")
    reference = nki_cpp.run("tensor_add_nc2", a, b, dtype="fp32", grid="spmd_dim(2,nc(2)),2", executor="reference")
    np.testing.assert_array_equal(halide, want)
    np.testing.assert_array_equal(reference, want)


def test_checked_mode_runs_and_matches(rng):
    x = rng.standard_normal((200, 64), dtype=np.float32)  # 200 rows: a masked last row tile
    y = nki_cpp.run("softmax", x, dtype="fp32", checked=True)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_matmul_of_small_integers_is_exact():
    rng = np.random.default_rng(7)
    lhs_t = rng.integers(-2, 3, size=(256, 128)).astype(np.float32)  # [K, M]
    rhs = rng.integers(-2, 3, size=(256, 512)).astype(np.float32)    # [K, N]
    result = nki_cpp.run("matmul_tiled", lhs_t, rhs)
    np.testing.assert_array_equal(result, lhs_t.T @ rhs)


def test_layernorm_against_numpy(rng):
    x = rng.standard_normal((256, 128), dtype=np.float32)
    gamma = rng.standard_normal((1, 128), dtype=np.float32)
    beta = rng.standard_normal((1, 128), dtype=np.float32)
    y = nki_cpp.run("layernorm", x, gamma, beta, dtype="fp32")
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-5)


def test_the_readme_example_runs():
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 1, "README.md has one python block, the \"From Python\" example"
    exec(compile(blocks[0], "README.md", "exec"), {})  # noqa: S102 - the README's own example
