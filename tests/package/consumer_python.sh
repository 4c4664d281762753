#!/usr/bin/env bash
# Installs nki-cpp into a prefix, imports nki_cpp from it, then configures, builds and runs
# examples/consumer_python (a module of a project's own) against that prefix.
#   consumer_python.sh <source dir> <nki build dir> <work dir> <python3> <module dir under the prefix>
# Passes when the installed nki_cpp adds two arrays right and the project's module runs its own
# kernel (two outputs) and a library kernel, matching numpy.
set -euo pipefail
src=$1 nki_build=$2 work=$3 python=$4 module_dir=$5
rm -rf "$work"
mkdir -p "$work"
cmake --install "$nki_build" --prefix "$work/prefix" > "$work/install.log"
export NKI_CACHE_DIR="$work/cache"
PYTHONPATH="$work/prefix/$module_dir" "$python" -c '
import numpy as np, nki_cpp
a = np.ones((128, 512), np.float32)
assert np.array_equal(nki_cpp.run("tensor_add", a, a), a + a)
assert nki_cpp.__file__.startswith("'"$work/prefix/"'"), nki_cpp.__file__
'
cmake -S "$src/examples/consumer_python" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DPython3_EXECUTABLE="$python" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
grep -q "$work/prefix/include" "$work/build/build.ninja" || { echo "not built against the prefix" >&2; exit 1; }
out=$(cd "$src/examples/consumer_python" && PYTHONPATH="$work/build" "$python" check.py)
[[ $out == "my_kernels: sum_and_difference and tensor_add match numpy" ]] || { echo "check.py printed: $out" >&2; exit 1; }
echo "consumer python module passes"
