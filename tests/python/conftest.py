"""Shared helpers of the nki_cpp tests: the `nki` command beside the module, and bf16 rounding in numpy."""
import json
import os
import subprocess

import numpy as np
import pytest


def nki_command(*args):
    """What the `nki` command (NKI_COMMAND, set by ctest) prints on stdout; fails the test on a non-zero exit."""
    result = subprocess.run([os.environ["NKI_COMMAND"], *args], capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"nki {' '.join(args)}: {result.stderr}"
    return result.stdout


def nki_json(*args):
    return json.loads(nki_command(*args))


def bf16(x):
    """float32 values rounded to bfloat16 (round to nearest even), as float32: no NaN in the data."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


@pytest.fixture
def rng():
    return np.random.default_rng(20261203)
