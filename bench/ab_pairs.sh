#!/usr/bin/env bash
# Alternated process pairs: one benchmark run under environment A and one under B, N times, each
# run with a cache directory of its variant's own (a switch read while compiling must not find
# the other variant's artifact). Prints every run's median counters named `ratio*`. Odd pairs run
# A first, even pairs B first (A B B A ...): in an A/A check of four A-then-B pairs the first
# process of every pair came out 1-3% ahead (bench/README.md, "eighth sitting"), so a fixed order
# can pass for a difference; use an even number of pairs.
# Why processes and not one binary: a lowering switch is read when a kernel compiles, so both
# variants cannot share a process; alternating the processes gives both the same machine moments.
#
# Usage: bench/ab_pairs.sh PAIRS FILTER 'A_ENV' 'B_ENV' [BENCH]
#   PAIRS   how many A-then-B pairs (1 to 100)
#   FILTER  a --benchmark_filter regex, e.g. 'matmul_over'
#   A_ENV   space-separated NAME=VALUE settings for A ('' for none); likewise B_ENV
#   BENCH   the benchmark binary (default build/bench/bench_kernels)
# Example: bench/ab_pairs.sh 4 'matmul_over' '' 'NKI_EXPERIMENT=1'
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ $# -lt 4 ]]; then
  echo "ab_pairs.sh: expected PAIRS FILTER A_ENV B_ENV [BENCH], got $# arguments" >&2
  exit 2
fi
pairs="$1" filter="$2" a_env="$3" b_env="$4"
bench="${5:-$here/../build/bench/bench_kernels}"
if ! [[ "$pairs" =~ ^[0-9]+$ ]] || (( pairs < 1 || pairs > 100 )); then
  echo "ab_pairs.sh: PAIRS '$pairs' is not a whole number from 1 to 100" >&2
  exit 2
fi
if [[ ! -x "$bench" ]]; then
  echo "ab_pairs.sh: no benchmark binary at $bench; build it first (cmake --build build)" >&2
  exit 2
fi
for setting in $a_env $b_env; do
  if ! [[ "$setting" =~ ^[A-Za-z_][A-Za-z0-9_]*=.*$ ]]; then
    echo "ab_pairs.sh: '$setting' is not a NAME=VALUE setting" >&2
    exit 2
  fi
done
caches="$(mktemp -d)"
trap 'rm -rf "$caches"' EXIT
mkdir "$caches/A" "$caches/B"
for ((i = 1; i <= pairs; ++i)); do
  order="A B"
  (( i % 2 == 0 )) && order="B A"
  for variant in $order; do
    settings="$a_env"
    [[ $variant == B ]] && settings="$b_env"
    # shellcheck disable=SC2086  # the settings are meant to split into words
    ratios="$(env $settings NKI_CACHE_DIR="$caches/$variant" OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}" \
      "$bench" --benchmark_filter="$filter" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 |
      awk '/_median/ { out = $1; for (f = 2; f <= NF; ++f) if ($f ~ /^ratio[a-z0-9_]*=/) out = out " " $f; print out }')"
    if [[ -z "$ratios" ]]; then
      echo "ab_pairs.sh: the filter '$filter' ran no benchmark with a ratio counter in $bench" >&2
      exit 1
    fi
    while IFS= read -r line; do echo "pair $i $variant $line"; done <<<"$ratios"
  done
done
