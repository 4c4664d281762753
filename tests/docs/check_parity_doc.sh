#!/usr/bin/env bash
# docs/nki-parity.md keeps one row per name of nki.language and nki.isa:
#   | `name` | yes | C++ spelling | `a test case name` |
#   | `name` | n/a | why it has no meaning here |  |
#   | `name` | no  | what is missing |  |
# This check fails when a row has another status, a `yes` row names no test case that exists
# (a TEST_CASE title under tests/ or a ctest under tutorials/ containing the quoted text), an
# `n/a` row gives no reason, or the doc's summary line disagrees with the rows.
#   check_parity_doc.sh <repository>
set -euo pipefail
repo=$1
doc=$repo/docs/nki-parity.md
titles=$(mktemp)
trap 'rm -f "$titles"' EXIT
grep -rhoE 'TEST_CASE\("([^"\\]|\\.)*"' "$repo/tests" | sed -e 's/^TEST_CASE("//' -e 's/"$//' > "$titles"
{ grep -rhoE "add_test\(NAME [A-Za-z0-9_]+" "$repo/tutorials" "$repo/tests" 2>/dev/null || true; } | sed "s/add_test(NAME //" >> "$titles"

bad=0 yes=0 no=0 na=0
while IFS='|' read -r _ name status spelling test _; do
  name=$(sed -E 's/^ +| +$//g' <<< "$name") status=$(tr -d ' ' <<< "$status")
  case $status in
    yes)
      yes=$((yes + 1))
      quoted=$(sed -nE 's/^ *`(.*)` *$/\1/p' <<< "$test")
      if [[ -z $quoted ]]; then
        echo "nki-parity.md: $name: implemented, but names no test (\`test case\` in the last column)"; bad=1
      elif ! grep -qF -- "$quoted" "$titles"; then
        echo "nki-parity.md: $name: the test \"$quoted\" does not exist"; bad=1
      fi ;;
    n/a)
      na=$((na + 1))
      if [[ -z $(echo "$spelling" | tr -d ' ') ]]; then echo "nki-parity.md: $name: n/a without a reason"; bad=1; fi ;;
    no) no=$((no + 1)) ;;
    *) echo "nki-parity.md: $name: status \"$status\", expected yes, n/a or no"; bad=1 ;;
  esac
done < <(grep -E '^\| `' "$doc")

summary="Implemented: $yes of $((yes + no)) names that apply here ($na not applicable)."
if ! grep -qF -- "$summary" "$doc"; then
  echo "nki-parity.md: the summary line should read: $summary"; bad=1
fi
[[ $bad == 0 ]] && echo "nki-parity.md: $summary"
exit $bad
