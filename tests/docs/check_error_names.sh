#!/usr/bin/env bash
# Every error name the code can raise ("err_..." as a string in dsl/, runtime/, simulator/ and
# kernels/) has a test that expects it: a test file under tests/ (other than this script) that
# holds the name. It fails listing each name without one, and prints how many it checked.
#   check_error_names.sh <repository>
set -euo pipefail
repo=$1
names=$(grep -rhoE '"err_[a-z0-9_]+"' "$repo/dsl" "$repo/runtime" "$repo/simulator" "$repo/kernels" \
          --include='*.cpp' --include='*.h' | tr -d '"' | sort -u)
[[ -n $names ]] || { echo "check_error_names: no err_ name found under $repo"; exit 1; }
missing=0 count=0
for name in $names; do
  count=$((count + 1))
  if ! grep -rqw --include='*.cpp' --include='*.h' --include='*.sh' --include='*.py' --exclude='check_error_names.sh' -- "$name" "$repo/tests"; then
    echo "check_error_names: $name is raised in the sources but no test under tests/ expects it"
    missing=$((missing + 1))
  fi
done
if ((missing > 0)); then
  echo "check_error_names: $missing of $count error names have no test"
  exit 1
fi
echo "every one of the $count error names has a test"
