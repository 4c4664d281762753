#!/usr/bin/env bash
# A rank killed (SIGKILL) while it compiles into the cache its host shares leaves no lock
# behind: the kernel drops the dead holder's flock, so the next `mpirun nki compile` of the
# same kernel compiles it (on rank 0) and the other rank loads it.
# Usage: killed_compiler.sh NKI MPIRUN [MPIRUN FLAGS...]
set -euo pipefail
nki=$1
shift
mpirun=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export NKI_CACHE_DIR=$dir/cache NKI_CACHE_LOCK_TIMEOUT=30
args=(compile tensor_add_nc2 --shape 256x1024 --shape 256x1024 --spmd --cores 2)  # a chip of one core per rank

# The pid holding an exclusive flock on a key's lock (not the Halide runtime's), if any.
lock_holder() {
  local lock inode
  for lock in "$dir"/cache/v*/locks/*.lock; do
    [[ -e $lock ]] || continue
    inode=$(stat -c %i "$lock")
    awk -v ino="$inode" '$2 == "FLOCK" { split($6, f, ":"); if (f[3] == ino) print $5 }' /proc/locks | head -1
  done
}

"${mpirun[@]}" -np 2 "$nki" "${args[@]}" >"$dir/first.log" 2>&1 &
job=$!
holder=""
for _ in $(seq 1 6000); do
  holder=$(lock_holder)
  [[ -n $holder ]] && break
  sleep 0.005
done
if [[ -z $holder ]]; then
  echo "killed_compiler: no rank was seen holding the key's lock" >&2
  cat "$dir/first.log" >&2
  exit 1
fi
kill -KILL "$holder"
if wait "$job"; then
  echo "killed_compiler: the job whose compiling rank was killed exited 0" >&2
  exit 1
fi

second=$("${mpirun[@]}" -np 2 "$nki" "${args[@]}" 2>&1)
expected="tensor_add_nc2: SPMD on 2 cores, grid spmd_dim(1,nc(2)),2: 1 artifact compiled, 1 reused"
if [[ $(head -1 <<<"$second") != "$expected" ]]; then
  printf 'killed_compiler: expected "%s", got:\n%s\n' "$expected" "$second" >&2
  exit 1
fi
echo "killed_compiler: rank $holder was killed holding the lock; the next run compiled: $expected"
