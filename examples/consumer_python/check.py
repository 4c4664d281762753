"""Runs the module's own kernel and a library kernel on numpy arrays and checks them against numpy."""
import numpy as np

import my_kernels

a = np.arange(256 * 512, dtype=np.float32).reshape(256, 512) * 0.5
b = np.full((256, 512), 3.0, dtype=np.float32)
s, d = my_kernels.run("sum_and_difference", a, b, dtype="fp32")
assert np.array_equal(s, a + b) and np.array_equal(d, a - b), "sum_and_difference differs from numpy"
c = my_kernels.run("tensor_add", a, b, dtype="fp32")
assert np.array_equal(c, a + b), "tensor_add differs from numpy"
assert "sum_and_difference" in my_kernels.kernels() and "tensor_add" in my_kernels.kernels()
try:
    my_kernels.run("sum_and_difference", a[:100], b[:100], dtype="fp32")
    raise AssertionError("a shape that does not tile ran")
except my_kernels.UserError as e:
    assert e.name == "err_input_shape_not_tiled", e.name
print("my_kernels: sum_and_difference and tensor_add match numpy")
