#!/usr/bin/env bash
# The STR bulk load in bounded memory (rtree_pack.c's external sort, here
# with maintenance_work_mem = 1MB, PostgreSQL's minimum, over 50000 points)
# keeps the bulk loads' crash safety: a write that fails with EIO, ENOSPC
# or a torn page, and a backend killed (kill -9) while it writes nodes,
# leave an index that is refused as incompletely built (FEST_META_BUILDING,
# docs/durability.md) with no structural error; a new load in bounded
# memory completes it, check() is clean and a window answers as PostGIS.
source "$(dirname "$0")/lib/tap.bash"

fresh_database festival_bulk_spill_faults
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the test kills a backend)"
fi
tap_plan 24

q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('bsf', io => 'buffered');
CREATE TABLE pts AS
    SELECT i AS id, ST_MakePoint((i::bigint * 7919) % 100003, (i::bigint * 104729) % 99991) AS geom
    FROM generate_series(1, 50000) i;
CREATE UNIQUE INDEX ON pts (id);
SELECT festival.create_index('s', 'rtree', 'bsf', '{"page_size": 1024}', 'pts');
SQL
window="ST_MakeEnvelope(10000, 20000, 60000, 70000)"
brute=$(q -c "SELECT count(*) FROM pts WHERE ST_Intersects(geom, $window)")

# verdict <what>: the index after a failed load, then a new bounded load
verdict() {
    local out
    out=$(psql -X -qAt -c "SET client_min_messages = warning" \
            -c "SELECT 'query=' || count(*) FROM festival.query('s', $window)" \
            -c "SELECT 'errors=' || count(*) FROM festival.check('s') WHERE severity = 'error' AND page IS NOT NULL" 2>&1)
    tap_like "$out" 'index "s" is incompletely built' "$1: a query is refused, the load did not finish"
    tap_like "$out" 'errors=0' "$1: check() finds no structural error"
    out=$(psql -X -qAt -c "SET jit = off" -c "SET maintenance_work_mem = '1MB'" -c "SET client_min_messages = debug1" \
            -c "SELECT 'built=' || festival.build('s', 'str')" \
            -c "SET client_min_messages = warning" \
            -c "SELECT 'check=' || count(*) FROM festival.check('s')" \
            -c "SELECT 'query=' || count(*) FROM festival.query('s', $window)" 2>&1 | tr '\n' ' ')
    tap_like "$out" 'continues in an external sort' "$1: the new load goes through the external sort"
    tap_like "$out" "built=50000.*check=0.*query=$brute" "$1: it completes the index, check() clean, $brute answers as PostGIS"
}

for e in EIO ENOSPC torn; do
    out=$(psql -X -qAt -c "SET jit = off" -c "SET maintenance_work_mem = '1MB'" -c "SET client_min_messages = debug1" \
            -c "SELECT festival.inject_fault('s', 'write', 900, '$e')" \
            -c "SELECT 'built=' || festival.build('s', 'str')" -c "SELECT festival.clear_fault('s')" 2>&1)
    tap_like "$out" 'continues in an external sort' "$e: the load goes through the external sort"
    tap_unlike "$out" 'built=' "$e: the 901st page write fails the load"
    verdict "$e"
done

out=$(psql -X -qAt -c "SET jit = off" -c "SET maintenance_work_mem = '1MB'" -c "SET client_min_messages = debug1" \
        -c "SELECT festival.inject_fault('s', 'write', 900, 'crash')" \
        -c "SELECT 'built=' || festival.build('s', 'str')" 2>&1)
tap_like "$out" 'continues in an external sort' "crash: the load goes through the external sort"
tap_unlike "$out" 'built=' "crash: the backend is killed at its 901st page write"
wait_for_server
verdict "crash"

psql -X -q -d postgres -c "DROP DATABASE festival_bulk_spill_faults" >/dev/null 2>&1
tap_done
