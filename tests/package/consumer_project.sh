#!/usr/bin/env bash
# Configures, builds and runs examples/consumer (a project of its own) against nki-cpp.
#   consumer_project.sh build-tree <source dir> <nki build dir> <work dir>
#   consumer_project.sh install    <source dir> <nki build dir> <work dir>   (cmake --install first)
# Passes when the consumer's own kernel runs and checks, the `nki` command it builds lists
# that kernel and its tunable form beside the library's, and a sweep of the tunable one records its best.
set -euo pipefail
mode=$1 src=$2 nki_build=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
case $mode in
  build-tree) package=(-Dnki_DIR="$nki_build") ;;
  install)
    cmake --install "$nki_build" --prefix "$work/prefix" > "$work/install.log"
    package=(-DCMAKE_PREFIX_PATH="$work/prefix")
    ;;
  *) echo "consumer_project.sh: unknown mode \"$mode\"; expected build-tree or install" >&2; exit 2 ;;
esac
cmake -S "$src/examples/consumer" -B "$work/build" -G Ninja "${package[@]}" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
export NKI_CACHE_DIR="$work/cache"
demo=$("$work/build/my_kernels" demo)
[[ $demo == "scaled_add: 131072 of 131072 elements match" ]] || { echo "demo printed: $demo" >&2; exit 1; }
list=$("$work/build/my_kernels" list)
grep -q '^scaled_add ' <<< "$list" || { echo "scaled_add not listed: $list" >&2; exit 1; }
grep -q '^matmul_fully_optimized ' <<< "$list" || { echo "library kernels not listed: $list" >&2; exit 1; }
grep -q '^scaled_add_tiled ' <<< "$list" || { echo "the tunable scaled_add_tiled not listed: $list" >&2; exit 1; }
# The tunable kernel sweeps: three configurations ranked by the cost model, the best recorded.
bench=$("$work/build/my_kernels" bench scaled_add_tiled --sweep "R=32,64,128" --shape 256x512 --shape 256x512)
grep -q "autotune: R=[0-9]* recorded for \[256,512\] \[256,512\] on trn2" <<< "$bench" || { echo "bench printed: $bench" >&2; exit 1; }
if [[ $mode == install ]]; then
  # The installed package is self-contained: headers and libraries come from the prefix.
  grep -q "$work/prefix/include" "$work/build/build.ninja" || { echo "not built against the prefix" >&2; exit 1; }
fi
echo "consumer project ($mode): demo and list pass"
