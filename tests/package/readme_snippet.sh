#!/usr/bin/env bash
# The README's CMake snippet is examples/consumer/CMakeLists.txt: the same lines (comments and
# blank lines aside), so the project the consumer tests build is the one the README shows.
#   readme_snippet.sh <source dir>
set -euo pipefail
src=$1
strip() { sed -e 's/#.*$//' -e 's/[[:space:]]*$//' -e '/^$/d'; }
snippet=$(awk '/^## Kernels in your own project/{s=1} s&&/^```cmake/{c=1;next} c&&/^```/{exit} c' "$src/README.md" | strip)
consumer=$(strip < "$src/examples/consumer/CMakeLists.txt")
[[ -n $snippet ]] || { echo "README.md has no cmake block under 'Kernels in your own project'" >&2; exit 1; }
if [[ $snippet != "$consumer" ]]; then
  echo "README.md's CMake snippet and examples/consumer/CMakeLists.txt differ:" >&2
  diff <(echo "$snippet") <(echo "$consumer") >&2 || true
  exit 1
fi
echo "README snippet is examples/consumer"
