#!/usr/bin/env bash
# Exit statuses and stderr of the real `nki` binary, as a shell sees them.
# Usage: exit_status.sh PATH/TO/nki
set -u

nki=${1:?usage: exit_status.sh PATH/TO/nki}
work=$(mktemp -d "${TMPDIR:-/tmp}/nki-exit-status.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect STATUS NAME ARGS...: runs nki ARGS, checks the exit status; for a non-zero
# status also that stderr is exactly one line. stdout/stderr land in $work/out, $work/err.
expect() {
  local want=$1 name=$2
  shift 2
  "$nki" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit status $got, expected $want (stderr: $(cat "$work/err"))"
  fi
  if [ "$want" -ne 0 ]; then
    local lines
    lines=$(wc -l <"$work/err")
    if [ "$lines" -ne 1 ] || [ "$(tail -c 1 "$work/err" | od -An -c | tr -d ' ')" != '\n' ]; then
      fail "$name: stderr is not exactly one line: $(cat "$work/err")"
    fi
    if [ -s "$work/out" ]; then
      fail "$name: wrote to stdout: $(cat "$work/out")"
    fi
  fi
}

expect 0 "nki list" list
grep -q '^tensor_add ' "$work/out" || fail "nki list does not list tensor_add"
grep -q '^tensor_add_nc2 ' "$work/out" || fail "nki list does not list tensor_add_nc2"

expect 0 "nki --help" --help
grep -q 'Usage: nki' "$work/out" || fail "nki --help prints no usage on stdout"

expect 0 "nki run --help" run --help

expect 2 "unknown kernel" run no_such_kernel --input "$work/a.npy" --input "$work/b.npy" --output "$work/c.npy"
want='nki run: err_unknown_kernel: unknown kernel "no_such_kernel"; known kernels: attn_fwd_v1, attn_fwd_v10, attn_fwd_v11, attn_fwd_v2, attn_fwd_v3, attn_fwd_v4, attn_fwd_v5, attn_fwd_v6, attn_fwd_v7, attn_fwd_v8, attn_fwd_v8a, attn_fwd_v9, average_pool2d, layernorm, mamba_v1, mamba_v2, mamba_v3, matmul_basic, matmul_block_free_dimension, matmul_fully_optimized, matmul_hoist_load, matmul_tiled, mlp, rmsnorm, softmax, tensor_add, tensor_add_nc2, tensor_add_tiled, tensor_parallel_mlp, transpose2d'
[ "$(cat "$work/err")" = "$want" ] || fail "unknown kernel: stderr is '$(cat "$work/err")', expected '$want'"

expect 2 "missing input file" run tensor_add --input "$work/missing.npy" --input "$work/b.npy" --output "$work/c.npy"
want="nki run: err_invalid_npy: $work/missing.npy: no such file"
[ "$(cat "$work/err")" = "$want" ] || fail "missing input: stderr is '$(cat "$work/err")', expected '$want'"

expect 2 "unknown command" frobnicate
expect 2 "no command"
expect 2 "unknown --dtype" run tensor_add --input "$work/a.npy" --input "$work/b.npy" --output "$work/c.npy" --dtype int8
expect 2 "missing --output" run tensor_add --input "$work/a.npy" --input "$work/b.npy"

expect 0 "nki mesh replica-groups" mesh replica-groups --mesh x=2,y=4 --axes y
[ "$(head -1 "$work/out")" = "replica_groups: [[0,1,2,3],[4,5,6,7]]" ] || fail "mesh replica-groups: stdout is '$(cat "$work/out")'"
expect 0 "nki mesh sharding --help" mesh sharding --help
expect 2 "mesh: bad --spec" mesh sharding --mesh x=2 --spec "('x'" --shape 4
expect 2 "mesh: no subcommand" mesh

expect 0 "nki profile" profile tensor_add_nc2 --shape 512x2048 --shape 512x2048 --dtype bf16 --json
grep -q '"latency_us"' "$work/out" || fail "profile --json: no latency_us in '$(cat "$work/out")'"
expect 2 "profile: unknown target, no trace written" profile tensor_add --shape 256x1024 --shape 256x1024 --target trn9 \
  --trace "$work/trace.json"

leftovers=$(find "$work" -mindepth 1 ! -name out ! -name err)
[ -z "$leftovers" ] || fail "files left behind: $leftovers"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all exit-status checks passed"
