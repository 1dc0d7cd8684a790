#!/usr/bin/env bash
# Progress of long operations (issue 28 item 11).  A source whose rows come
# slowly (a view sleeping about a millisecond per row) makes a build, a
# bulk load, festival.insert_many and festival.check() last a few seconds:
# with festival.progress_interval = 1 each prints a NOTICE while it reads
# its rows (fewer than all of them counted), not only once at the end (as
# when rows were counted per 10,000-row fetch) or never (bulk loads).
# Then, on a cluster of its own started with shared_preload_libraries =
# festival, another session sees a build in festival.progress (its pid,
# index, operation and a growing count), and the row goes when the build
# ends or is cancelled.  On a server without it the view has no rows.
source "$(dirname "$0")/lib/tap.bash"

ROWS=1500

slow_source() {
    q <<SQL >/dev/null
SET client_min_messages = warning;
CREATE TABLE pts AS
    SELECT i AS id, ST_MakePoint((i::bigint * 7919) % 100003, (i::bigint * 104729) % 99991) AS geom
    FROM generate_series(1, $ROWS) i;
CREATE TABLE more (id bigint, geom geometry);
INSERT INTO more SELECT id + $ROWS, geom FROM pts;
CREATE FUNCTION slowly(g geometry) RETURNS geometry LANGUAGE plpgsql AS
    \$\$ BEGIN PERFORM pg_sleep(0.001); RETURN g; END \$\$;
CREATE VIEW slow_pts AS SELECT id, slowly(geom) AS geom FROM pts;
SELECT festival.create_device('progress', io => 'buffered');
SELECT festival.create_index('i', 'rtree', 'progress', '{}', 'slow_pts');
SELECT festival.create_index('s', 'rtree', 'progress', '{}', 'slow_pts');
SQL
}

# the smallest count of rows a notice of "$1" (operation) reported
first_count() {
    printf '%s\n' "$2" | sed -n "s/.*NOTICE:  $1 of index \"[a-z]*\": [a-z ]*, \([0-9]*\) rows after .*/\1/p" | head -n 1
}

early_notice() {    # early_notice <operation> <psql output> <description>
    local n
    n=$(first_count "$1" "$2")
    tap_ok "$( [ -n "$n" ] && [ "$n" -lt $ROWS ]; echo $?)" "$3 (first notice at ${n:-no} rows of $ROWS)"
}

fresh_database festival_progress
tap_plan 12
slow_source

out=$(q -c "SET festival.progress_interval = 1" -c "SELECT festival.build('i')")
early_notice build "$out" "an insert build prints a notice while it runs"
out=$(q -c "SET festival.progress_interval = 1" -c "SELECT festival.build('s', 'str')")
early_notice "bulk load" "$out" "a bulk load prints a notice while it reads its source"
out=$(q -c "SET festival.progress_interval = 1" -c "SELECT count(*) FROM festival.check('i')")
early_notice check "$out" "check() prints a notice while it compares with the source"
out=$(q -c "SET festival.progress_interval = 1" \
        -c "SELECT festival.insert_many('s', query => 'SELECT id, slowly(geom) FROM more')")
early_notice insert_many "$out" "insert_many prints a notice while it inserts"

if [ "$(qv -c 'SHOW shared_preload_libraries')" != festival ]; then
    out=$(q -c "SELECT count(*) FROM festival.progress")
    tap_is "$out" 0 "without festival preloaded, festival.progress has no rows"
else
    tap_ok 0 "# SKIP the server under test preloads festival"
fi

# ---- another session's view, on a cluster that preloads festival ----
# shellcheck source=../../scripts/lib.sh
source "$(dirname "$0")/../../scripts/lib.sh" 2>/dev/null
set +e
fest_start_cluster 54347 "-c shared_preload_libraries=festival" 2>/dev/null
psql -X -q -d postgres -c "CREATE DATABASE festival_progress" >/dev/null
export PGDATABASE=festival_progress
q -c "CREATE EXTENSION festival CASCADE" >/dev/null
slow_source

# poll <sql>: the first non-empty answer within 20 s
poll() {
    local got
    for _ in $(seq 1 200); do
        got=$(qv -c "$1")
        [ -n "$got" ] && { echo "$got"; return 0; }
        sleep 0.1
    done
}

psql -X -qAt -c "SET festival.progress_interval = 0" -c "SELECT festival.build('i')" >/dev/null 2>&1 &
builder=$!
row=$(poll "SELECT p.operation || ' ' || p.index_name || ' ' || p.database || ' ' || p.phase || ' ' || (a.query LIKE '%festival.build(''i'')%')
            FROM festival.progress p JOIN pg_stat_activity a USING (pid) WHERE p.done > 0")
tap_is "$row" "build i festival_progress inserting rows true" \
    "another session sees the build in festival.progress: operation, index, database, phase, the builder's pid"
first=$(qv -c "SELECT done FROM festival.progress WHERE index_name = 'i'")
sleep 1
second=$(qv -c "SELECT done FROM festival.progress WHERE index_name = 'i'")
tap_ok "$( [ -n "$first" ] && [ -n "$second" ] && [ "$second" -gt "$first" ]; echo $?)" \
    "its count grows while the build runs ($first, then $second rows)"
started=$(qv -c "SELECT started <= now() AND started > now() - interval '1 minute' AND total IS NULL AND unit = 'rows' FROM festival.progress WHERE index_name = 'i'")
tap_is "$started" t "it says when the build started, and that its total is unknown"
wait $builder
tap_is "$(qv -c "SELECT count(*) FROM festival.progress")" 0 "the row goes when the build ends"

psql -X -qAt -c "SELECT festival.build('s', 'str')" >/dev/null 2>&1 &
loader=$!
pid=$(poll "SELECT pid FROM festival.progress WHERE operation = 'bulk load' AND done > 0")
tap_ok "$( [ -n "$pid" ]; echo $?)" "a bulk load shows in festival.progress too"
qv -c "SELECT pg_cancel_backend($pid)" >/dev/null
wait $loader
tap_is "$(qv -c "SELECT count(*) FROM festival.progress")" 0 "the row goes when the operation is cancelled"

# a role sees only its own roles' operations (as pg_stat_activity)
q -c "CREATE ROLE progress_reader LOGIN" >/dev/null
psql -X -qAt -c "SET festival.progress_interval = 0" -c "SELECT festival.build('i')" >/dev/null 2>&1 &
builder=$!
poll "SELECT 1 FROM festival.progress" >/dev/null
tap_is "$(qv -U progress_reader -c "SELECT count(*) FROM festival.progress")" 0 \
    "another role does not see a superuser's operation"
wait $builder

tap_done
