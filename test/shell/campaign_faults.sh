#!/usr/bin/env bash
# The fault campaign's small mode (scripts/campaign-faults: its operation
# table on the R-tree and 24 trials of its configuration matrix) runs and
# finds no failure; --long is for humans.
source "$(dirname "$0")/lib/tap.bash"

tap_plan 2
out=$("$(dirname "$0")/../../scripts/campaign-faults" --no-setup 2>&1)
status=$?
tap_ok $status "scripts/campaign-faults exits 0"
tap_like "$out" '^no trial failed$' "it prints its table and reports no failure"
[ $status -eq 0 ] || sed 's/^/#   /' <<<"$out"
tap_done
