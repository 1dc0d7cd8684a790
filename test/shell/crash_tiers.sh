#!/usr/bin/env bash
# Tiered indexes (issue 12, src/tier): kill -9 during migrations and
# demotions loses nothing acknowledged and leaves check() clean; a damaged
# or missing tier map is a clean error.
#
# Crash scenario, for FAST and eFIND over two devices ("crash" slow,
# "crash_fast" fast), under placements that migrate while inserting: hot
# with a fast tier of 3 pages (every promotion past the third demotes a
# page), level (every split of an inner node writes a new fast page) and
# level_hot with a capacity.  1,000 points are built and closed; a victim
# streams inserts (each reads nodes, so the hot model promotes and demotes
# as it goes; 40 such inserts after a reopen made 5 promotions and 2
# demotions under hot with 3 pages when measured by hand) and its backend
# is killed after 40 acknowledgements, in the middle of the next insert.  The next session must find every
# acknowledged object, answer 16 windows as brute force does and get a
# clean festival.check(), which reads every page on the tier the map names,
# requires the other tier's copy to be released and the capacity kept.
#
# Damage: one byte of the map of a closed index is flipped: opening it is
# ERRCODE_DATA_CORRUPTED (XX001) naming the map with a hint; a missing map
# is ERRCODE_UNDEFINED_FILE (58P01).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_tiers 39 with_device
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('crash_fast', io => 'buffered', profile => 'optane_memory_32gb')" >/dev/null

crashed() {   # crashed <index> <options>
    local ix=$1 out
    crash_index "$ix" "$2" 1000
    ACKED=1000
    victim_start "$tmp/$ix.err"
    victim_kill_midstream "$ix" 1001 60 40
    tap_ok $((BURST_ACKED >= 40 ? 0 : 1)) "$ix: at least 40 inserts acknowledged before the kill"
    wait_for_server
    recovery_checks "$ix"
    out=$(q -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
            -c "SELECT 'fast=' || count(*) FROM festival.tier_pages('$ix') WHERE tier = 'fast'")
    tap_like "$out" '^mismatches=0$' "$ix: 16 windows answer as brute force does"
    tap_like "$out" '^fast=[1-9][0-9]*$' "$ix: pages live on the fast tier"
}

crashed hot_fast '{"framework": "fast", "page_size": 1024, "fast_device": "crash_fast", "placement": "hot", "hot_selectivity": 1.0, "fast_capacity": 3}'
crashed level_efind '{"framework": "efind", "page_size": 1024, "fast_device": "crash_fast", "placement": "level"}'
crashed lhot_fast '{"framework": "fast", "page_size": 1024, "fast_device": "crash_fast", "placement": "level_hot", "hot_selectivity": 1.0, "fast_capacity": 12}'

# damaged and missing maps of a closed index
q -c "SET client_min_messages = warning" \
  -c "CREATE TABLE dmg_src (id bigint PRIMARY KEY, geom geometry)" \
  -c "INSERT INTO dmg_src SELECT i, pt(i) FROM generate_series(1, 500) i" \
  -c "SELECT festival.create_index('dmg', 'rtree', 'crash', '{\"page_size\": 1024, \"fast_device\": \"crash_fast\", \"placement\": \"level\"}', 'dmg_src')" \
  -c "SELECT festival.build('dmg')" -c "SELECT festival.close('dmg')" >/dev/null
map="$(index_file dmg).tiermap"
tap_ok "$([ -s "$map" ]; echo $?)" "dmg: the tier map is a file beside the index file"
flip_byte "$map" 30
out=$(psql -X -qAt -v VERBOSITY=verbose -c "SELECT count(*) FROM festival.query('dmg', ST_MakeEnvelope(0, 0, 2000, 2000))" 2>&1)
tap_like "$out" '^ERROR:  XX001: tier map ".*" of index "dmg" is damaged: checksum mismatch$' \
    "dmg: a flipped byte of the map is a data-corrupted error"
tap_like "$out" '^HINT:  The map says which device holds each page' "dmg: with a hint"
flip_byte "$map" 30
out=$(q -c "SELECT 'rows=' || count(*) FROM festival.query('dmg', ST_MakeEnvelope(0, 0, 2000, 2000))" \
        -c "SELECT 'check=' || coalesce(string_agg(message, '; '), '') FROM festival.check('dmg')" -c "SELECT festival.close('dmg')")
tap_like "$out" '^rows=500$' "dmg: restored, the map serves all 500 objects"
tap_like "$out" '^check=$' "dmg: and festival.check() is clean"
mv "$map" "$map.away"
out=$(psql -X -qAt -v VERBOSITY=verbose -c "SELECT count(*) FROM festival.query('dmg', ST_MakeEnvelope(0, 0, 2000, 2000))" 2>&1)
tap_like "$out" '^ERROR:  58P01: tier map ".*" of index "dmg" is missing$' "dmg: a missing map is an undefined-file error"
mv "$map.away" "$map"

crash_end festival_crash_tiers
