#!/usr/bin/env bash
# The layering check itself: the repository passes it, and a tree with an include against the
# layers (a core header including a launch header, an installed header including an internal
# one, Halide.h outside the compile library) fails it with one line per violation.
#   check_layers_test.sh <repository> <scratch dir>
set -euo pipefail
repo=$1 scratch=$2
cmake -DNKI_SOURCE_DIR="$repo" -P "$repo/cmake/check_layers.cmake"

rm -rf "$scratch" && mkdir -p "$scratch"
tree=$scratch/tree
mkdir -p "$tree/runtime/core/include/nki" "$tree/runtime/core/internal/core" "$tree/runtime/launch/include/nki" \
         "$tree/runtime/dist/src" "$tree/runtime/compile/include/nki"
echo '#include "nki/kernel.h"' > "$tree/runtime/core/include/nki/tensor.h"
echo '#include "core/program.h"' > "$tree/runtime/launch/include/nki/kernel.h"
echo '' > "$tree/runtime/core/internal/core/program.h"
printf '#include "nki/compile_cache.h"\n#include <Halide.h>\n' > "$tree/runtime/dist/src/mesh.cpp"
echo '' > "$tree/runtime/compile/include/nki/compile_cache.h"
if cmake -DNKI_SOURCE_DIR="$tree" -P "$repo/cmake/check_layers.cmake" > "$scratch/out.txt" 2>&1; then
  echo "check_layers passed a tree with violations" >&2
  exit 1
fi
# CMake wraps long messages: compare the words.
got=$(tr -s ' \n' '  ' < "$scratch/out.txt")
for expected in \
  'runtime/core/include/nki/tensor.h: includes "nki/kernel.h" of launch, above core' \
  'runtime/launch/include/nki/kernel.h: an installed header includes "core/program.h", an internal header of core' \
  'runtime/dist/src/mesh.cpp: includes "nki/compile_cache.h" of compile, above dist' \
  'runtime/dist/src/mesh.cpp: includes Halide.h, which only runtime/compile/src may include' \
  'check_layers: 4 include(s) against the layers'; do
  if [[ $got != *"$expected"* ]]; then
    echo "missing from the check's output: $expected" >&2
    cat "$scratch/out.txt" >&2
    exit 1
  fi
done
echo "layering check passes the repository and names every violation"
