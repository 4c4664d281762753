#!/usr/bin/env bash
# Where the blocked matmul's fused `psum += matmul` step spends its time, by region of its code:
# its k loops (each: the basic blocks from its first to its last vfmadd231ps and its branch; the
# step has two since the PSUM fill fold, a copy for the iteration that does the fill), the
# operands' widening to fp32 (vpmovzxwd / vpslld / vmovdqa64), and the PSUM accumulate after a k
# loop (with the loops' control). Samples come from `perf record -e cpu-clock` (no hardware
# counters on a VM guest), so a share is time, not instructions. A change to the step shows here
# when the alternated ratios are lost in this machine's noise (bench/README.md, "fifth sitting").
#
# Usage: bench/matmul_regions.sh [SECONDS] [BENCH]   (defaults: 8, build/bench/bench_kernels)
# Environment settings given to this script reach the benchmark (e.g. an experiment's switch).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-8}"
bench="${2:-$here/../build/bench/bench_kernels}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || (( seconds < 1 || seconds > 600 )); then
  echo "matmul_regions.sh: SECONDS '$seconds' is not a whole number from 1 to 600" >&2
  exit 2
fi
if [[ ! -x "$bench" ]]; then
  echo "matmul_regions.sh: no benchmark binary at $bench; build it first (cmake --build build)" >&2
  exit 2
fi
for tool in perf objdump python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "matmul_regions.sh: needs '$tool' on the PATH (Debian: linux-perf, binutils, python3)" >&2
    exit 2
  fi
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! NKI_CACHE_DIR="$work/cache" perf record -q -e cpu-clock -o "$work/perf.data" \
  "$bench" --benchmark_filter='^matmul_fully_optimized_nc2' --benchmark_min_time="$seconds" >"$work/bench.out" 2>"$work/bench.err"; then
  echo "matmul_regions.sh: perf record of $bench failed: $(grep -m1 . "$work/bench.err" || echo 'no message')" >&2
  exit 1
fi
grep '^matmul' "$work/bench.out" || true
perf report -i "$work/perf.data" --no-children --sort sym 2>/dev/null > "$work/report"
# The hottest compiled step is the fused matmul step.
step="$(awk '$3 ~ /^nki_matmul_fully_optimized_/ && !found { print $3; found = 1 }' "$work/report")"
if [[ -z "$step" ]]; then
  echo "matmul_regions.sh: no compiled matmul step among the samples of $bench" >&2
  exit 1
fi
so="$(find "$work/cache" -name kernel.so -print -quit)"
awk -v s="$step" '$3 == s { print "step " s ": " $1 " of the samples" }' "$work/report"
perf annotate -i "$work/perf.data" --stdio -s "$step" 2>/dev/null > "$work/annotate"
objdump -d --no-show-raw-insn "$so" > "$work/disassembly"
awk -v s="<$step>:" '$2 == s { on = 1; next } on && /^$/ { on = 0 } on' "$work/disassembly" > "$work/code"
python3 - "$work/annotate" "$work/code" <<'EOF'
import re, sys
share = {}
for line in open(sys.argv[1]):
    m = re.match(r'\s+([0-9.]+) :\s+([0-9a-f]+):', line)
    if m:
        share[int(m.group(2), 16)] = share.get(int(m.group(2), 16), 0.0) + float(m.group(1))
code = []
for line in open(sys.argv[2]):
    m = re.match(r'\s+([0-9a-f]+):\s+(.*)', line)
    if m:
        code.append((int(m.group(1), 16), m.group(2)))
fmas = [i for i, (_, text) in enumerate(code) if text.startswith('vfmadd231ps')]
if not fmas:
    sys.exit('matmul_regions.sh: the step has no vfmadd231ps: not the blocked matmul step')
branch = [text.startswith('j') for _, text in code]
# The step may hold several k loops (a specialized copy, e.g. the iteration that does the PSUM
# fill): fmas with no branch between them are one loop's body, which begins after the last branch
# before its first fma and ends at its own branch.
groups = []
for i in fmas:
    if groups and not any(branch[groups[-1][1]:i]):
        groups[-1][1] = i
    else:
        groups.append([i, i])
loops = [(max([j for j in range(a) if branch[j]] or [-1]) + 1, next(j for j in range(b, len(code)) if branch[j]))
         for a, b in groups]
regions = {'k loop': 0.0, 'widening': 0.0, 'accumulate': 0.0, 'other': 0.0}
for i, (address, text) in enumerate(code):
    s = share.get(address, 0.0)
    if any(first <= i <= last for first, last in loops):
        regions['k loop'] += s
    elif text.split()[0] in ('vpmovzxwd', 'vpslld', 'vmovdqa64'):
        regions['widening'] += s
    elif any(i > last for _, last in loops):  # after a k loop: its sums added into PSUM, the loops' control
        regions['accumulate'] += s
    else:
        regions['other'] += s
print('  '.join(f'{name} {value:.1f}%' for name, value in regions.items()) + f'  (of the step; {len(loops)} k loops)')
EOF
