#!/usr/bin/env bash
# kill -9 in the flush of a tiered FAST or eFIND index (level_hot, all_fast),
# at the slow device's sync or the fast device's.  The flush has written
# pages the tier map does not name yet (new pages, migrations); after the
# restart the map's crash recovery releases every copy it does not name,
# and the log's replay restores every change: no warning (a page the log
# holds whole is not "torn" because its stored copy was released), every
# acknowledged row answered (recovery_checks), check() clean (one valid copy
# per page), changes accepted.  Found by the fault campaign (issue 21).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_tiers_flush $((2 * 2 * 2 * 11)) with_tiers

RECOVERY_MAY_BE_CLEAN=1
n=0
for fw in fast efind; do
    for placement in level_hot all_fast; do
        for target in sync fast:sync; do
            n=$((n + 1))
            opts="{\"page_size\": 1024, \"framework\": \"$fw\", \"fast_device\": \"crash_fast\", \"placement\": \"$placement\""
            [ "$placement" = level_hot ] && opts+=', "hot_selectivity": 1.0'
            flush_kill_case "tf$n" "$opts}" "$target" "$fw, $placement"
        done
    done
done

crash_end festival_crash_tiers_flush
