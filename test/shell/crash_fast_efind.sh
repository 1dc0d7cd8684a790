#!/usr/bin/env bash
# FAST and eFIND indices whose backend is killed (kill -9, so PostgreSQL
# restarts) in the middle of a stream of inserts lose nothing that was
# acknowledged: with festival.log_sync = operation (the default) every
# modification is in the synced redo log before its statement returns.
#
# A victim session inserts one object per statement into a source table
# and the index, in the same statement, and reads each acknowledgement;
# its backend is killed while a burst of inserts is running.  The source
# table is transactional, so it holds exactly the acknowledged objects
# (plus, at most, the one whose commit the kill did not interrupt before
# its acknowledgement was read).  The index is outside transactions: it
# may also hold the object the kill interrupted between the index insert
# and the commit, and nothing else.
#
# After the restart, the first use replays the log (a NOTICE counts the
# modifications restored), every object of the source table is in the
# index exactly once, festival.check() is clean, work goes on with queries
# equal to brute force, and the next session opens the index silently.
#
# Each framework is killed three times:
#   plain     default options;
#   compact   log_size 32768: the log is compacted every few dozen inserts;
#   flush     buffer_size 16384: flushing units are written constantly.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_buffered 96 with_device

# scenario <index> <options> <totals counter the inserts must have moved, or "">
scenario() {
    local ix=$1 counter=$3 out

    crash_index "$ix" "$2" 2000
    ACKED=2000
    victim_start "$tmp/$ix.err"
    victim_insert "$ix" 2001 2300
    tap_is "$INSERT_ACKS" "300" "$ix: the victim acknowledged 300 inserts"
    if [ -n "$counter" ]; then
        out=$(victim_ask "SELECT festival.stats('$ix')->'totals'->>'$counter'")
        tap_ok "$([ "${out:-0}" -gt 0 ] 2>/dev/null; echo $?)" \
            "$ix: the victim's inserts caused $counter ($out) before the kill"
    fi
    midstream_crash_checks "$ix" "$counter"
}

for fw in fast efind; do
    scenario "${fw}_plain" "{\"framework\": \"$fw\", \"page_size\": 1024}" ""
    scenario "${fw}_compact" "{\"framework\": \"$fw\", \"page_size\": 1024, \"log_size\": 32768}" log_compactions
    scenario "${fw}_flush" "{\"framework\": \"$fw\", \"page_size\": 1024, \"buffer_size\": 16384}" flushes
done

crash_end festival_crash_buffered
