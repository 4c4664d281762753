"""Tutorial (Python): the multi-core tensor add from numpy, checked against numpy.

tensor_add_nc2 is the library's tensor add on the grid [spmd_dim(P/256, nc(2)), F/512]: the
partition tiles are spread over the two NeuronCores of a logical core, which share HBM. The
arrays are rounded to bf16 on the way in, as `nki run --dtype bf16` rounds .npy inputs, and the
bf16 result comes back as float32.

    PYTHONPATH=build/python python3 tutorials/python/01_tensor_add.py
"""
import numpy as np

import nki_cpp


def bf16(x):
    """float32 to bfloat16 and back, rounding to nearest even (as the kernel's loads and store do)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


rng = np.random.default_rng(2)
a = rng.uniform(-4, 4, size=(512, 2048)).astype(np.float32)
b = rng.uniform(-4, 4, size=(512, 2048)).astype(np.float32)

# Three lines: launch on both cores, compare with numpy.
c = nki_cpp.run("tensor_add_nc2", a, b, dtype="bf16")
expected = bf16(bf16(a) + bf16(b))
assert np.array_equal(c, expected), f"{np.count_nonzero(c != expected)} elements differ"

# What the launch costs on the simulated NeuronCores (the dict `nki profile --json` prints).
report = nki_cpp.profile("tensor_add_nc2", a, b, dtype="bf16")
print(f"tensor_add_nc2 [512, 2048] bf16: simulated {report['latency_us']:.2f} us on {report['target']}")
print(f"{c.size} of {c.size} elements: NKI and reference match")
