#!/usr/bin/env bash
# The bulk loads in bounded memory (rtree_bulk.c's STR and Hilbert packing,
# hilbert_rtree_bulk.c's Hilbert R-tree load, gridfile_bulk.c's and
# xbrtree_bulk.c's; here with
# maintenance_work_mem = 1MB, PostgreSQL's minimum, over 50000 points) keep
# the bulk loads' crash safety: a write that fails with EIO, ENOSPC or a
# torn page, and a backend killed (kill -9) while it writes nodes, leave
# an index that is refused as incompletely built (FEST_META_BUILDING,
# docs/durability.md) with no structural error; a new load in bounded
# memory completes it, check() is clean and a window answers as PostGIS.
# A full disk for the external sort's and the loads' temporary files
# (temp_file_limit, which fails their writes as ENOSPC would) is a clean
# error that leaves the same refused, consistent index.
source "$(dirname "$0")/lib/tap.bash"

fresh_database festival_bulk_spill_faults
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the test kills a backend)"
fi
tap_plan 102

scattered_points pts 50000
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('bsf', io => 'buffered');
SELECT festival.create_index('s', 'rtree', 'bsf', '{"page_size": 1024}', 'pts');
SELECT festival.create_index('hp', 'rtree', 'bsf', '{"page_size": 1024}', 'pts');
SELECT festival.create_index('h', 'hilbert', 'bsf', '{"page_size": 1024}', 'pts');
SELECT festival.create_index('g', 'gridfile', 'bsf', '{"page_size": 1024}', 'pts');
SELECT festival.create_index('x', 'xbrtree', 'bsf', '{"page_size": 1024}', 'pts');
SQL
window="ST_MakeEnvelope(10000, 20000, 60000, 70000)"
brute=$(q -c "SELECT count(*) FROM pts WHERE ST_Intersects(geom, $window)")

# load <index> <method> [sql before]: a bounded load, its output on one line
load() {
    psql -X -qAt -c "SET jit = off" -c "SET maintenance_work_mem = '1MB'" -c "SET client_min_messages = debug1" \
        ${3:+-c "$3"} -c "SELECT 'built=' || festival.build('$1', '$2')" 2>&1 | tr '\n' ' '
}

# verdict <index> <method> <what>: the index after a failed load, then a new bounded load
verdict() {
    local out
    out=$(psql -X -qAt -c "SET client_min_messages = warning" \
            -c "SELECT 'query=' || count(*) FROM festival.query('$1', $window)" \
            -c "SELECT 'errors=' || count(*) FROM festival.check('$1') WHERE severity = 'error' AND page IS NOT NULL" 2>&1)
    tap_like "$out" "index \"$1\" is incompletely built" "$3: a query is refused, the load did not finish"
    tap_like "$out" 'errors=0' "$3: check() finds no structural error"
    out=$(load "$1" "$2")
    out="$out $(psql -X -qAt -c "SET client_min_messages = warning" \
            -c "SELECT 'check=' || count(*) FROM festival.check('$1')" \
            -c "SELECT 'query=' || count(*) FROM festival.query('$1', $window)" 2>&1 | tr '\n' ' ')"
    tap_like "$out" 'continues in an external sort' "$3: the new load goes through the external sort"
    tap_like "$out" "built=50000.*check=0.*query=$brute" "$3: it completes the index, check() clean, $brute answers as PostGIS"
}

# faults <index> <method> <fault>...: each fault at the 901st page write
faults() {
    local idx=$1 method=$2 e out
    shift 2
    for e in "$@"; do
        out=$(load "$idx" "$method" "SELECT festival.inject_fault('$idx', 'write', 900, '$e')")
        q -c "SELECT festival.clear_fault('$idx')" >/dev/null
        tap_like "$out" 'continues in an external sort' "$idx $method $e: the load goes through the external sort"
        tap_unlike "$out" 'built=' "$idx $method $e: the 901st page write fails the load"
        verdict "$idx" "$method" "$idx $method $e"
    done
}

# crash <index> <method>: the backend killed at its 901st page write
crash() {
    local out
    out=$(load "$1" "$2" "SELECT festival.inject_fault('$1', 'write', 900, 'crash')")
    tap_like "$out" 'continues in an external sort' "$1 $2 crash: the load goes through the external sort"
    tap_unlike "$out" 'built=' "$1 $2 crash: the backend is killed at its 901st page write"
    wait_for_server
    verdict "$1" "$2" "$1 $2 crash"
}

# tempfull <index> <method>: the temporary files may not exceed 200 kB
tempfull() {
    local out
    out=$(load "$1" "$2" "SET temp_file_limit = '200kB'")
    tap_like "$out" 'temporary file size exceeds temp_file_limit' "$1 $2 full temporary disk: a clean error"
    tap_unlike "$out" 'built=' "$1 $2 full temporary disk: the load does not finish"
    verdict "$1" "$2" "$1 $2 full temporary disk"
}

faults s str EIO ENOSPC torn
crash s str
tempfull s str
faults hp hilbert ENOSPC
crash hp hilbert
tempfull hp hilbert
faults h hilbert ENOSPC
crash h hilbert
tempfull h hilbert
faults g bulk ENOSPC
crash g bulk
tempfull g bulk
faults x bulk ENOSPC
crash x bulk
tempfull x bulk

psql -X -q -d postgres -c "DROP DATABASE festival_bulk_spill_faults" >/dev/null 2>&1
tap_done
