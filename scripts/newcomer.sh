#!/usr/bin/env bash
# What a newcomer does first (issue 20): a fresh clone, the README's two commands exactly as the
# README writes them, then the calls people type from the SDKs' habits (scripts/newcomer_calls.py)
# in that fresh venv, against the emulator. No key, no network beyond the package registry.
#
#   scripts/newcomer.sh            # everything (the test command takes ~10 minutes)
#   NEWCOMER_TESTS=0 scripts/newcomer.sh   # skip the README's test command
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/modelstream"
if [ -d "$repo/../shared" ]; then
    ln -s "$(cd "$repo/../shared" && pwd)" "$work/shared"  # the corpus the tests read in place
fi
cd "$work/modelstream"

# The README's two commands, read from it so this checks what the README says.
main_command=$(grep -m1 -E '^python3 -m venv \.venv && .* && \.venv/bin/modelstream demo$' README.md)
test_command=$(grep -m1 -E '^python3 -m venv \.venv && .*\[test\].* && \.venv/bin/pytest' README.md)

echo "== $main_command"
start=$SECONDS
bash -c "$main_command" > "$work/demo.txt"
echo "   ok in $((SECONDS - start)) s ($(grep -c . "$work/demo.txt") lines of demo output)"

if [ "${NEWCOMER_TESTS:-1}" = 1 ]; then
    echo "== $test_command"
    start=$SECONDS
    bash -c "$test_command -q -p no:cacheprovider" | tail -n 3
    echo "   ok in $((SECONDS - start)) s"
fi

echo "== the SDK-style calls (items 1-3) in the fresh venv"
.venv/bin/python "$repo/scripts/newcomer_calls.py"
