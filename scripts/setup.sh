#!/usr/bin/env bash
# Installs the Debian packages nki-cpp builds with, when any is missing.
# Idempotent: when everything is present it only runs dpkg queries (well under a second).
set -euo pipefail

packages=(
  g++ cmake ninja-build
  libhalide14-0-dev libtbb-dev libfmt-dev doctest-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev
  libopenblas-dev  # the sgemm baseline of bench/bench_kernels.cpp
  openmpi-bin libopenmpi-dev  # the MPI backend and its mpirun tests (optional: -DNKI_ENABLE_MPI=OFF)
  clang libclang-rt-14-dev  # the fuzz targets (libFuzzer) in .ci/run
  gnuplot-nox               # nki bench --plot (its tests render a PNG)
  python3-dev pybind11-dev python3-numpy python3-pytest  # the Python module nki_cpp and its tests
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
