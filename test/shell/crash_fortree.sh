#!/usr/bin/env bash
# kill -9 of FOR-tree indices (structure fortree, Jin et al. 2015) in the
# middle of their write paths: insertions that add overflow nodes and merge
# groups back, deletions that pack and dissolve groups, and the FOR-tree's
# own write buffer (framework fortree: its flushing units and redo log).
#
# 1. Under the FOR-tree's buffer, a stream of inserts killed in the middle
#    (as crash_fast_efind.sh does for FAST and eFIND): plain (every
#    modification in the log), compact (log_size 32768: compacted every few
#    dozen inserts) and flush (buffer_size 16384: units written all the
#    time).  Before the kill the victim's inserts created overflow nodes
#    and merged groups back.  After the restart the log restores every
#    acknowledged insert (recovery_checks), and work goes on.
# 2. Under the FOR-tree's buffer, killed at the k-th page write of a flush
#    of 60 buffered inserts: nothing acknowledged is lost.
# 3. Write-through over a page cache (its journal), killed as an insert
#    writes its journal group: the journal restores every acknowledged one.
# 4. Write-through without a cache, a stream of inserts and deletes (merge-
#    backs, groups dissolved and inserted again) killed between statements:
#    the index opens suspect, answers every acknowledged change, check()
#    finds no error, and it takes changes again (survived_checks).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

FLUSH_POINTS="0 2 5"
crash_begin festival_crash_fortree $((17 + 16 + 16 + 3 * 10 + 11 + 9)) with_device

# 1. a stream of inserts under the FOR-tree's buffer, killed in the middle
scenario() {   # scenario <index> <options> <totals counter the inserts must have moved, or "">
    local ix=$1 counter=$3 out before
    crash_index "$ix" "$2" 2000 fortree
    ACKED=2000
    victim_start "$tmp/$ix.err"
    before=$(victim_ask "SELECT (festival.stats('$ix')->'totals'->>'overflow_nodes')::int + (festival.stats('$ix')->'totals'->>'merge_backs')::int")
    victim_insert "$ix" 2001 2300
    tap_is "$INSERT_ACKS" "300" "$ix: the victim acknowledged 300 inserts"
    out=$(victim_ask "SELECT 'overflow=' || (t->>'overflow_nodes') || ' merged=' || (t->>'merge_backs') || ' counted=' || coalesce(t->>'$counter', '1')
                      FROM (SELECT festival.stats('$ix')->'totals' AS t) s")
    tap_like "$out" '^overflow=[1-9][0-9]* merged=[1-9][0-9]* counted=[1-9]' \
        "$ix: its inserts created overflow nodes and merged groups back${counter:+, and caused $counter} ($out, $before before)"
    midstream_crash_checks "$ix" "$counter"
}
scenario forb_plain '{"framework": "fortree", "page_size": 1024}' ""
scenario forb_compact '{"framework": "fortree", "page_size": 1024, "log_size": 32768}' log_compactions
scenario forb_flush '{"framework": "fortree", "page_size": 1024, "buffer_size": 16384, "flushing_unit": 3}' flushes

# 2. killed in a flush of the FOR-tree's buffer
for k in $FLUSH_POINTS; do
    ix="forb_kflush$k"
    crash_index "$ix" '{"framework": "fortree", "page_size": 1024, "buffer_size": 65536}' 500 fortree
    ACKED=500
    victim_start "$tmp/$ix.err"
    victim_insert "$ix" 501 560
    victim_ask "SELECT festival.inject_fault('$ix', 'write', $k, 'crash')" >/dev/null
    flushed=$(victim_ask "SELECT festival.flush('$ix')")
    victim_end
    tap_is "$ACKED/$flushed" "560/" "$ix: 60 inserts acknowledged, the backend died at write $k of the flush"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"
    RECOVERY_MAY_BE_CLEAN=1 recovery_checks "$ix"
done

# 3. write-through over a page cache: killed as an insert writes its journal group
ix=jn_fortree
crash_index "$ix" '{"page_size": 1024, "cache": "lru", "cache_size": 16384}' 500 fortree
ACKED=500
victim_start "$tmp/$ix.err"
victim_ask "SET festival.log_sync = operation" >/dev/null
victim_insert "$ix" 501 620
victim_ask "SELECT festival.inject_fault('$ix', 'log_write', 0, 'crash')" >/dev/null
victim_ask "$(insert_sql "$ix" 621)" >/dev/null
victim_end
tap_is "$ACKED" 620 "$ix: 120 inserts acknowledged, the backend died in the 121st"
wait_for_server
tap_ok $? "$ix: the server is back after the crash restart"
recovery_checks "$ix"
out=$(q -c "$(insert_sql "$ix" 9000)")
tap_is "$out" "t" "$ix: and accepts changes at once"

# 4. write-through: inserts and deletes, killed between statements
ix=wt_fortree
crash_index "$ix" '{"page_size": 1024, "x": 1, "y": 2}' 800 fortree
churn_statements "$ix" >"$tmp/$ix.sql"
victim_start "$tmp/$ix.err"
victim_stream "$tmp/$ix.sql"
out=$(victim_ask "SELECT 'merged=' || (festival.stats('$ix')->'totals'->>'merge_backs') || ' reinserted=' || (festival.stats('$ix')->'totals'->>'reinserted_entries')")
victim_kill
tap_is "$STREAM_ACKS" 700 "$ix: the victim acknowledged 300 inserts and 400 deletes"
tap_like "$out" '^merged=[1-9][0-9]* reinserted=[0-9]+$' "$ix: with merge-backs ($out)"
wait_for_server
survived_checks "$ix" 2000

crash_end festival_crash_fortree
