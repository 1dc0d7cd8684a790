#!/usr/bin/env bash
# A FAST or eFIND index whose backend is killed (kill -9) in the middle of
# festival.build() keeps the rows the build committed before the kill: a
# build inserts one row per modification, each synced in the redo log
# (festival.log_sync = operation).  After the restart the first use
# replays the log; the index holds a prefix of the source rows, in the
# order the build read them, at least as many as its last progress report
# counted; check() finds no structural problem, only that the index holds
# fewer entries than the source; queries are refused (the index is
# incompletely built) in this session and the next, which opens it
# silently, until a new build completes it.
#
# log_size is 1 MB so that the log is compacted, and units flushed, every
# few thousand rows before the kill.  The table has 100000 rows: with a
# synced log a build inserts a few thousand rows a second here, and the
# rebuild at the end (which does not sync its log, festival.log_sync =
# never, only for speed) inserts some 30000.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_build 26
scattered_points pts 100000
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('crash_build', io => 'buffered');
SQL

for fw in fast efind; do
    ix="b_$fw"
    q -c "SELECT festival.create_index('$ix', 'rtree', 'crash_build',
                 '{\"framework\": \"$fw\", \"page_size\": 2048, \"log_size\": 1048576}', 'pts')" >/dev/null

    # a build killed after its first progress report (every second)
    victim_start "$tmp/$ix.err"
    victim_send "SET festival.progress_interval = 1"
    victim_send "SELECT festival.build('$ix')"
    reported=""
    for _ in $(seq 1 600); do
        reported=$(sed -n "s/^NOTICE:  build of index \"$ix\": inserting rows, \([0-9]*\) rows after .*/\1/p" "$tmp/$ix.err" | head -n 1)
        [ -n "$reported" ] && break
        sleep 0.1
    done
    victim_kill
    tap_ok "$([ -n "$reported" ] && [ "$reported" -lt 100000 ]; echo $?)" \
        "$ix: the build was killed with SIGKILL after reporting ${reported:-no} rows"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"

    count_message="the index holds ' || (festival.stats('$ix')->>'entries') || ' entries but source table % has 100000 rows with a geometry"
    out=$(q -c "SELECT 'entries=' || (festival.stats('$ix')->>'entries')" \
            -c "CREATE TEMP TABLE report AS SELECT * FROM festival.check('$ix')" \
            -c "SELECT 'check: ' || severity || ' ' || coalesce(page::text, '-') || ' ' || message FROM report" \
            -c "SELECT 'count_error=' || count(*) FROM report WHERE severity = 'error' AND message LIKE '$count_message'" \
            -c "SELECT 'others=' || count(*) FROM report WHERE NOT (severity = 'error' AND message LIKE '$count_message')" \
            -c "SELECT 'query=' || count(*) FROM festival.query('$ix', ST_MakeEnvelope(0, 0, 200000, 200000))")
    entries=$(printf '%s\n' "$out" | sed -n 's/^entries=//p')
    tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its log restored [1-9][0-9]* modifications$" \
        "$ix: the first use replays the log"
    tap_unlike "$out" 'WARNING' "$ix: and does not warn"
    tap_ok "$([ -n "$entries" ] && [ -n "$reported" ] && [ "$entries" -ge "$reported" ] && [ "$entries" -lt 100000 ]; echo $?)" \
        "$ix: the index holds the rows committed before the kill ($entries, at least $reported)"
    tap_like "$out" "index \"$ix\" is incompletely built" \
        "$ix: queries are refused: it holds part of its source"
    tap_like "$out" '^count_error=1$' "$ix: check() reports that the index holds fewer entries than the source"
    tap_like "$out" '^others=0$' "$ix: and nothing else (no structural problem)"

    out=$(q -c "SELECT count(*) FROM festival.query('$ix', ST_MakePoint(7919, 104729))")
    tap_unlike "$out" 'not closed cleanly|WARNING' "$ix: the next session opens it without a warning"
    tap_like "$out" 'is incompletely built' "$ix: and still refuses queries until a build"

    # the log of this build is not synced: only the result matters here
    out=$(q -c "SET festival.log_sync = never" -c "SET festival.progress_interval = 0" \
            -c "SELECT 'built=' || festival.build('$ix')" \
            -c "SELECT 'check=' || count(*) FROM festival.check('$ix')" \
            -c "SELECT 'query=' || count(*) FROM festival.query('$ix', ST_MakeEnvelope(0, 0, 200000, 200000))")
    tap_like "$out" '^built=100000$' "$ix: a new build inserts every row"
    tap_like "$out" '^check=0$' "$ix: check() is clean afterwards"
    tap_like "$out" '^query=100000$' "$ix: queries see every row"
done

crash_end festival_crash_build
