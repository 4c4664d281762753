#!/usr/bin/env bash
# Every ```cpp block of docs/reference.md's "Registering kernels" section is quoted verbatim from
# examples/consumer/main.cpp, so the documented registration is code the consumer tests build.
#   doc_blocks.sh <source dir>
set -euo pipefail
src=$1
file=$(< "$src/examples/consumer/main.cpp")
blocks=0 block="" in_section=0 in_block=0
while IFS= read -r line; do
  if [[ $line == "## "* ]]; then
    [[ $line == "## Registering kernels" ]] && in_section=1 || in_section=0
    continue
  fi
  (( in_section )) || continue
  if (( in_block )); then
    if [[ $line == '```' ]]; then
      in_block=0 blocks=$((blocks + 1))
      [[ $file == *"$block"* ]] || { printf 'docs/reference.md block %d is not in examples/consumer/main.cpp:\n%s\n' "$blocks" "$block" >&2; exit 1; }
      block=""
    else
      block+="${block:+$'\n'}$line"
    fi
  elif [[ $line == '```cpp' ]]; then
    in_block=1
  fi
done < "$src/docs/reference.md"
(( blocks >= 3 )) || { echo "docs/reference.md: 'Registering kernels' has $blocks cpp blocks; expected 3" >&2; exit 1; }
echo "registration docs quote examples/consumer ($blocks blocks)"
