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
    local whole="ST_MakeEnvelope(-10, -10, 2000, 2000)"

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
    victim_kill_midstream "$ix" 2301 200 100
    tap_ok "$([ "$BURST_ACKED" -lt 200 ]; echo $?)" \
        "$ix: its backend was killed in the middle of 200 inserts ($BURST_ACKED acknowledged)"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"

    # the first use of the index replays its log
    recovery_checks "$ix"
    if [ -z "$counter" ]; then
        # nothing was compacted: every insert since the build is in the log
        tap_ok "$([ "${RESTORED:-0}" -ge $((ACKED - 2000)) ]; echo $?)" \
            "$ix: the log restored every acknowledged insert ($RESTORED modifications, $((ACKED - 2000)) acknowledged)"
    fi

    # work goes on; the session above ended normally, so this one opens silently
    out=$(q -c "WITH s AS (INSERT INTO ${ix}_src SELECT i, pt(i) FROM generate_series(3001, 3200) i RETURNING id, geom)
                SELECT 'inserted=' || count(*) FILTER (WHERE festival.insert('$ix', id, geom)) FROM s" \
            -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
            -c "SELECT 'complete=' || ((SELECT count(*) FROM festival.query('$ix', $whole)) = (SELECT count(*) FROM ${ix}_src))")
    tap_unlike "$out" 'not closed cleanly|WARNING|ERROR' "$ix: the next session opens it without a warning"
    tap_like "$out" '^inserted=200$' "$ix: 200 more inserts"
    tap_like "$out" '^mismatches=0$' "$ix: window queries give what brute force gives"
    tap_like "$out" '^complete=true$' "$ix: the index holds every object of the source table"
}

for fw in fast efind; do
    scenario "${fw}_plain" "{\"framework\": \"$fw\", \"page_size\": 1024}" ""
    scenario "${fw}_compact" "{\"framework\": \"$fw\", \"page_size\": 1024, \"log_size\": 32768}" log_compactions
    scenario "${fw}_flush" "{\"framework\": \"$fw\", \"page_size\": 1024, \"buffer_size\": 16384}" flushes
done

crash_end festival_crash_buffered
