#!/usr/bin/env bash
# H-Grid's per-device write buffers (src/tier/tier_buffer.c, Fevgas 2019
# §4.3): kill -9 and failed writes while pages wait in the slow or the fast
# write buffer, or while a buffer's flush migrates flagged pages, lose
# nothing acknowledged.
#
# Write buffers of 2 or 3 pages, so that buffers fill and flush (one batch
# each) all the time, and hot_selectivity 1.0, so that pages are promoted
# (flagged, then read and written to the fast tier by the fast buffer's
# flush) all the time.
#
# Kill between statements, write-through (the journal has every commit):
# R-trees under hot and random and a grid file under level_hot (H-Grid
# "special"), and the variant without write buffers (write_buffers
# shared_cache: promotions through a 16 kB lru cache), each built over 800
# points and closed; one victim session
# sends each 300 inserts and 400 deletes, one statement each with its
# source table, and is killed once all are acknowledged: pages are in the
# buffers then.  survived_checks (lib/crash.bash): every acknowledged row,
# no deleted one, check() clean (which verifies the buffers' invariants
# and one valid copy of each page on the tier the map names), more inserts
# taken, brute-force answers in a later session.
#
# Kill mid-insert, FAST (the log has every acknowledged insert): a grid
# file under hot, built over 1,000 points and closed; a victim streams
# inserts and is killed after 40 acknowledgements, in the middle of the
# next; recovery_checks (lib/crash.bash).
#
# Kill in a flush that cools (cool_after 4), FAST: the fault layer kills
# the backend at the slow or the fast device's sync of festival.flush();
# recovery_checks, and changes are taken at once.
#
# The crash campaign's LB-Grid and adaptive grid file rows under hot with
# write buffers of 1-2 pages (8 seeded trials).
#
# Failed writes (write_fault_checks, lib/crash.bash): a write-through
# R-tree under hot with buffers of 2 pages, the fault layer failing the next
# write of the fast device (a fast buffer's flush: migrations and writes of
# fast pages) and of the slow device (a slow buffer's flush), and, under
# write_buffers shared_cache over an lru cache, of the fast device (the
# cache's write-back of a promoted page), and, with cool_after 4, of the slow
# device (a cooled page's demotion at a flush, the buffers' writes), with
# ENOSPC:
# the first error is 53100, nothing acknowledged is lost, flush() and
# close() do not succeed over changes they could not write.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

cases=(
    "bw_hot rtree hot,wb2"
    "bw_random rtree random,wb2"
    "bw_glhot gridfile level_hot,wb3"
    "bw_shared rtree lru,hot,shared"
)
faults=(
    "bf_fast rtree fast:write hot,wb2"
    "bf_slow rtree write hot,wb2"
    "bf_shared rtree fast:write lru,hot,shared"
    "bf_cool rtree write hot,cool4"
)
crash_begin festival_crash_tiers_buffers \
    $((${#cases[@]} * 8 + 9 + 2 * 11 + ${#faults[@]} * 5 + 1)) with_tiers optane_memory_32gb

# kill between statements, write-through
made=()
for c in "${cases[@]}"; do
    set -- $c
    crash_index "$1" "$(fault_options "$2" "$3")" 800 "$2"
    made+=("$1")
done
churn_kill_survive "${made[@]}"

# kill mid-insert, FAST
midstream_kill_case bk_ghot "$(fault_options gridfile fast,hot,wb2)" gridfile

# kill in a flush that cools (cool_after 4: the flush demotes the pages
# idle since, then writes the buffers and syncs), FAST, at the slow or the
# fast device's sync
RECOVERY_MAY_BE_CLEAN=1
for target in sync fast:sync; do
    flush_kill_case "bc_${target//:/_}" "$(fault_options rtree fast,hot,wb2,cool4)" "$target" "FAST, hot, cool_after 4"
done
RECOVERY_MAY_BE_CLEAN=0

# failed writes at a buffer's flush
write_fault_schema
for c in "${faults[@]}"; do
    write_fault_case $c
done

# the crash campaign's rows of LB-Grid and the adaptive grid file under hot
# with write buffers of 1-2 pages over an lru cache (scripts/campaign-crash):
# a journal replay after the kill makes a freed page a bucket again and the
# detector promotes it while its node image is only in the cache; the
# buffer's flush must not move the page's old (freed) copy, which would
# take it out of the hot set, so that the bucket arrived fast but not hot
# (check(): "page N is fast but not hot")
root="$(cd "$(dirname "$0")/../.." && pwd)"
out=$("$root/scripts/campaign-crash" --no-setup --structures lbgrid,agrid --frameworks none --caches lru \
      --placements hot+buffers --trials 8 --batch 1 --seed 3 2>&1)
rc=$?
tap_ok "$rc" "campaign-crash on lbgrid and agrid under hot with write buffers: no failure ($(printf '%s\n' "$out" | grep '^total' | tr -s ' '))"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | grep FAILURE | sed 's/^/#   /'

crash_end festival_crash_tiers_buffers
