#!/usr/bin/env bash
# A failed write under a write-back page cache or under write-through tiers
# (issue 21, item 3): no acknowledged change is lost, no query answers
# wrongly without an error, and flush() and close() do not succeed over
# changes they could not write.
#
# Each case builds an index over 1,000 points and closes it; a session
# inserts 1,000 more one at a time (each insert and its source row in one
# subtransaction, so the source table holds exactly the acknowledged
# rows), arms the fault layer (festival.inject_fault) to fail the next
# operation of a target with ENOSPC (for the tier map's write, which a
# flush makes, then calls flush()), inserts 200 more the same way, queries
# the whole extent, and calls flush() and close(); the next session queries
# again.  Five assertions a case (lib/crash.bash, write_fault_checks): the
# first error is 53100; in that session the whole extent answers every
# acknowledged row and nothing else, or fails; flush() or close() fails, or
# the next session holds every acknowledged row and nothing else; the next
# session answers right or fails; every acknowledged row is there in it.
# The cases: an R-tree under lru (16 kB; the issue's reproduction), a grid
# file and an LB-Grid under clru (16 kB, cold lists of 2), at a write of
# the index's device; write-through R-trees under all_fast at a write of
# the fast device and at the page -> tier map's write (tier_map_write,
# which the flush makes), a write-through grid file under level_hot at a
# write of the slow device; and, as a control that is right today, a FAST
# R-tree under lru.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

cases=(
    "wb_lru rtree write lru"
    "wb_gclru gridfile write clru"
    "wb_lbclru lbgrid write clru"
    "wt_allfast rtree fast:write all_fast"
    "wt_map rtree tier_map_write all_fast"
    "wt_glhot gridfile write level_hot"
    "fast_lru rtree write fast,lru"
)
crash_begin festival_write_back_faults $((${#cases[@]} * 5)) with_device
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('crash_fast', io => 'buffered')" >/dev/null
write_fault_schema

for c in "${cases[@]}"; do
    write_fault_case $c
done

crash_end festival_write_back_faults
