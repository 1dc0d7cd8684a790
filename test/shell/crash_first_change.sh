#!/usr/bin/env bash
# FAST and eFIND: a crash in the first change after an open (issue 21,
# item 5).  Before that change's group reaches the log, the store marks
# the meta page "not clean" (so that an open replays the log); a crash
# between the two (the fault layer's 'crash' at the change's first log
# write) leaves a log with nothing to replay, so the meta page that mark
# wrote is what the next open believes.  It must describe the index as it
# was before the change: its entry count (which stats() shows and check()
# compares) and its root.  Before the fix it held the change's own count,
# unvouched, so stats()->>'entries' was NULL and the next clean close made
# the wrong count "valid" for good ("the tree holds 501 entries but the
# meta page counts 502"), and a change that split the root left the meta
# naming a root page that was never written (every entry lost).
#
# For FAST and eFIND, over an R-tree and a grid file of 500 points, a
# crashed insert and a crashed delete; and for both frameworks an R-tree
# whose root is a full leaf, so that the crashed insert splits the root.
# After each crash: the next session's entry count is the source table's,
# every object answers, check() is clean; one more change and a close,
# and the session after that finds the count, the objects and check()
# right again.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_first 90 with_device

# first_change <index> <structure> <framework> <rows> <insert|delete> [build method]
first_change() {
    local ix=$1 structure=$2 fw=$3 rows=$4 op=$5 method=${6:-} out stmt next pid
    local opts="{\"framework\": \"$fw\", \"page_size\": 1024, \"extent\": [0, 0, 1000, 1000]}"
    [ "$structure" = rtree ] && opts="{\"framework\": \"$fw\", \"page_size\": 1024}"
    q <<SQL >/dev/null
SET client_min_messages = warning;
CREATE TABLE ${ix}_src (id bigint PRIMARY KEY, geom geometry);
INSERT INTO ${ix}_src SELECT i, pt(i) FROM generate_series(1, $rows) i;
SELECT festival.create_index('$ix', '$structure', 'crash', '$opts', '${ix}_src');
SELECT festival.build('$ix'${method:+, '$method'});
SELECT festival.close('$ix');
SQL
    if [ "$op" = insert ]; then
        stmt="SELECT festival.insert('$ix', $((rows + 1)), pt($((rows + 1))))"
        next="WITH s AS (INSERT INTO ${ix}_src VALUES ($((rows + 2)), pt($((rows + 2)))) RETURNING id, geom)
              SELECT 'next=' || festival.insert('$ix', id, geom) FROM s"
    else
        stmt="SELECT festival.delete('$ix', 1, pt(1))"
        next="WITH s AS (DELETE FROM ${ix}_src WHERE id = 2 RETURNING id, geom)
              SELECT 'next=' || festival.delete('$ix', id, geom) FROM s"
    fi
    # the backend kills itself at the change's first log write
    out=$(psql -X -qAt -c "SELECT 'pid=' || pg_backend_pid()" \
                       -c "SELECT festival.inject_fault('$ix', 'log_write', 0, 'crash')" -c "$stmt" 2>&1)
    tap_like "$out" 'server closed the connection unexpectedly' "$ix: the $op crashed at its first log write"
    # once the postmaster has reaped the backend it restarts the server; a
    # session started before that would be killed by the restart
    pid=$(sed -n 's/^pid=//p' <<<"$out")
    for _ in $(seq 1 200); do [ -e "/proc/$pid" ] || break; sleep 0.05; done
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"

    out=$(q -c "SELECT 'entries=' || coalesce(festival.stats('$ix')->>'entries', 'unknown')" \
            -c "SELECT 'wrong=' || count(*) FROM ((SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-1, -1, 1001, 1001))
                                                   EXCEPT ALL SELECT id FROM ${ix}_src)
                                                  UNION ALL (SELECT id FROM ${ix}_src EXCEPT ALL
                                                   SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-1, -1, 1001, 1001)))) d" \
            -c "SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') FROM festival.check('$ix')" \
            -c "$next" \
            -c "SELECT 'closed=' || festival.close('$ix')")
    tap_like "$out" "^entries=$rows\$" "$ix: reopened, the entry count is the one before the crashed $op ($rows)"
    tap_like "$out" '^wrong=0$' "$ix: and the index holds exactly the source table"
    tap_like "$out" '^check=$' "$ix: check() finds nothing"
    tap_like "$out" '^next=true$' "$ix: the next $op is acknowledged"
    out=$(q -c "SELECT 'entries=' || ((festival.stats('$ix')->>'entries')::bigint = (SELECT count(*) FROM ${ix}_src))" \
            -c "SELECT 'wrong=' || count(*) FROM ((SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-1, -1, 1001, 1001))
                                                   EXCEPT ALL SELECT id FROM ${ix}_src)
                                                  UNION ALL (SELECT id FROM ${ix}_src EXCEPT ALL
                                                   SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-1, -1, 1001, 1001)))) d" \
            -c "SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') FROM festival.check('$ix')")
    tap_like "$out" '^entries=true$' "$ix: after a close, the entry count is the source table's"
    tap_like "$out" '^wrong=0$' "$ix: the index holds exactly the source table"
    tap_like "$out" '^check=$' "$ix: check() finds nothing"
}

for fw in fast efind; do
    for s in rtree gridfile; do
        first_change "${fw}_${s}_ins" "$s" "$fw" 500 insert
        first_change "${fw}_${s}_del" "$s" "$fw" 500 delete
    done
    # 24 entries fill a root leaf of 1 kB pages: the 25th splits the root
    first_change "${fw}_rootsplit" rtree "$fw" 24 insert insert
done

crash_end festival_crash_first
