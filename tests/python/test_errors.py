"""Bad input gives nki_cpp.UserError naming the value: never a crash, never a partial result."""
import numpy as np
import pytest

import nki_cpp

A = np.ones((128, 512), dtype=np.float32)


def error_of(call):
    with pytest.raises(nki_cpp.UserError) as e:
        call()
    return e.value.name, str(e.value)


def test_user_error_is_an_exception_with_the_nki_name():
    assert issubclass(nki_cpp.UserError, Exception)
    name, message = error_of(lambda: nki_cpp.run("tensor_ad", A, A))
    assert name == "err_unknown_kernel"
    assert message.startswith('err_unknown_kernel: unknown kernel "tensor_ad"; known kernels: attn_fwd_v1, ')


@pytest.mark.parametrize(
    "arrays, name, message",
    [
        ((A.astype(np.complex64), A), "err_invalid_array",
         "err_invalid_array: argument 1: holds dtype '<c8'; expected float32 ('<f4'), float64 ('<f8'), float16 "
         "('<f2'), int8 ('|i1'), int16 ('<i2'), int32 ('<i4'), int64 ('<i8'), uint8 ('|u1'), uint16 ('<u2'), "
         "uint32 ('<u4') or bool ('|b1'), little endian"),
        ((A, A.astype(">f4")), "err_invalid_array", "err_invalid_array: argument 2: holds dtype '>f4'; expected"),
        ((A, np.array(["x"] * 4)), "err_invalid_array", "err_invalid_array: argument 2: holds dtype '<U1'; expected"),
        ((np.ones((128, 1024), np.float32)[:, ::2], A), "err_invalid_array",
         "err_invalid_array: argument 1: shape [128,512] of float32 has strides (4096, 8), not C order; expected a "
         "C-contiguous array (numpy.ascontiguousarray makes one)"),
        ((np.asfortranarray(np.ones((128, 512), np.float32)), A), "err_invalid_array",
         "err_invalid_array: argument 1: shape [128,512] of float32 has strides (4, 512), not C order"),
        ((A[0], A[0]), "err_input_shape_not_tiled",
         "tensor_add: err_input_shape_not_tiled: input shape [512] is not a 2-D multiple of the tile [128,512]"),
        ((np.float32(1.0), A), "err_invalid_array", "err_invalid_array: argument 1: holds a 0-d scalar; expected an array"),
        ((np.ones((0, 512), np.float32), A), "err_invalid_array",
         "err_invalid_array: argument 1: has shape [0,512] with an empty dimension"),
        ((A,), "err_argument_count", "tensor_add: err_argument_count: takes 2 arrays, 1 given"),
        ((A, A, A), "err_argument_count", "tensor_add: err_argument_count: takes 2 arrays, 3 given"),
        ((np.full((128, 512), 2**40, np.int64), A), "err_invalid_array",
         "err_invalid_array: argument 1: holds int64 value 1099511627776 at flat index 0, outside int32"),
    ],
)
def test_bad_arrays(arrays, name, message):
    got_name, got_message = error_of(lambda: nki_cpp.run("tensor_add", *arrays))
    assert got_name == name
    assert got_message.startswith(message), got_message


@pytest.mark.parametrize(
    "call, name, message",
    [
        (lambda: nki_cpp.run("tensor_add", A, A, dtype="int4"), "err_unknown_dtype",
         'err_unknown_dtype: unknown dtype= "int4"; expected one of fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, tf32, '
         "fp8_e4m3fn, fp8_e8m0fnu"),
        (lambda: nki_cpp.run("tensor_add", A, A, executor="gpu"), "err_unknown_executor",
         'err_unknown_executor: unknown executor="gpu"; expected halide or reference'),
        (lambda: nki_cpp.run("tensor_add", A, A, target="trn9"), "err_unknown_target",
         'err_unknown_target: unknown target "trn9"; expected one of trn1, inf2, trn2, trn3'),
        (lambda: nki_cpp.run("tensor_add", A, A, grid="4,4"), "err_grid_does_not_fit",
         'tensor_add: err_grid_does_not_fit: grid "4,4" has logical shape [4,4], but inputs [128,512] [128,512] '
         "need logical shape [1,1]"),
        (lambda: nki_cpp.run("matmul_basic", np.ones((256, 128), np.float32), np.ones((256, 512), np.float32)),
         "err_input_shape_not_tiled", "matmul_basic: err_input_shape_not_tiled: lhsT [256,128] and rhs [256,512]"),
        (lambda: nki_cpp.profile("tensor_add", (128, 0), (128, 512)), "err_invalid_shape",
         "err_invalid_shape: argument 1: (128, 0) is neither a numpy array nor a shape; expected an array or a tuple "
         "of positive sizes, e.g. (4096, 8192)"),
        (lambda: nki_cpp.profile("tensor_add", (128, 512), (128, 512), trace=""), "err_output_not_writable",
         "err_output_not_writable: trace= is an empty path"),
        (lambda: nki_cpp.bench("tensor_add", sweep="P=64", shapes=[(128, 512)] * 2), "err_not_tunable",
         "tensor_add: err_not_tunable: has no tile parameters to sweep; tunable kernels: mamba_v3, "
         "matmul_fully_optimized, tensor_add_tiled"),
        (lambda: nki_cpp.bench("tensor_add_tiled", sweep="P=64;Q=3", shapes=[(128, 512)] * 2), "err_invalid_sweep",
         'tensor_add_tiled: err_invalid_sweep: sweep="P=64;Q=3": Q is not a parameter of tensor_add_tiled; its '
         "parameters: P, F"),
        (lambda: nki_cpp.bench("tensor_add_tiled", sweep="P=64", shapes=[(128, 512)] * 2, metric="wall"),
         "err_invalid_metric", 'err_invalid_metric: unknown metric="wall"; expected simulated or host'),
        (lambda: nki_cpp.bench("tensor_add_tiled", sweep="P=64", shapes=[(128, 512)] * 2, metric="host", iters=0),
         "err_invalid_iters", "err_invalid_iters: iters=0: expected a count >= 1"),
        (lambda: nki_cpp.mesh.replica_groups("x=2,y", "x"), "err_invalid_mesh",
         'err_invalid_mesh: --mesh "x=2,y": entry "y" is not name=size; expected e.g. x=2,y=4'),
        (lambda: nki_cpp.mesh.replica_groups(8, "x"), "err_invalid_mesh",
         'err_invalid_mesh: mesh=8: expected axes in order as "x=2,y=4" or {"x": 2, "y": 4}'),
    ],
)
def test_bad_arguments(call, name, message):
    got_name, got_message = error_of(call)
    assert got_name == name
    assert got_message.startswith(message), got_message


def test_a_trace_is_not_written_when_profiling_fails(tmp_path):
    trace = tmp_path / "t.json"
    error_of(lambda: nki_cpp.profile("tensor_add", (100, 512), (100, 512), trace=str(trace)))
    assert list(tmp_path.iterdir()) == []
