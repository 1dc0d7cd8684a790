#!/usr/bin/env bash
# The fault campaign's small mode (scripts/campaign-faults: its operation
# table on the R-tree and 24 trials of its configuration matrix) runs and
# finds no failure; then 8 matrix trials over the four trees with window
# searches a level at a time in batches of 4 (--settings); --long is for
# humans.
source "$(dirname "$0")/lib/tap.bash"

tap_plan 3
out=$("$(dirname "$0")/../../scripts/campaign-faults" --no-setup 2>&1)
status=$?
tap_ok $status "scripts/campaign-faults exits 0"
tap_like "$out" '^no trial failed$' "it prints its table and reports no failure"
[ $status -eq 0 ] || sed 's/^/#   /' <<<"$out"
out=$("$(dirname "$0")/../../scripts/campaign-faults" --no-setup --matrix-only --trials 8 \
    --structures rtree,rstartree,hilbert,xbrtree \
    --settings '{"festival.window_search": "level", "festival.queue_depth": 4}' 2>&1)
status=$?
tap_ok $status "scripts/campaign-faults with window searches a level at a time exits 0"
[ $status -eq 0 ] || sed 's/^/#   /' <<<"$out"
tap_done
