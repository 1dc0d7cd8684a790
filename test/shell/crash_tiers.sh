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
# acknowledged object, answer 17 windows as brute force does and get a
# clean festival.check(), which reads every page on the tier the map names,
# requires the other tier's copy to be released and the capacity kept.
#
# Damage: one byte of the map of a closed index is flipped: opening it is
# ERRCODE_DATA_CORRUPTED (XX001) naming the map with a hint; a missing map
# is ERRCODE_UNDEFINED_FILE (58P01).
#
# Map: a backend killed half-way through the flush's map write (the
# tier_map_write target) leaves the map in place: every acknowledged object
# answers and check() is clean.
#
# Weights (the hot-page detector's state, "<index file>.tierhot", written at
# a flush or close): a backend killed in the middle of writing them (the
# fault layer's tier_write target with error crash, which dies half-way
# through the temporary file) leaves the weights of the last flush and a
# valid map: every object answers, check() is clean, and the weights,
# accesses per page are those saved at the last flush.  A flipped byte of
# the weights file is a WARNING (XX001) naming the file; the index serves
# every object and checks clean, its fast pages hot with no history, and
# the next close writes the weights again.
#
# Weights under hot_selectivity_tuning auto: a backend killed writing them
# (tier_write, crash) after its queries moved s leaves the s and clock of
# the last flush; the next session opens without a word, serves every
# object as brute force does and checks clean.
#
# A backend ended by SIGTERM (pg_terminate_backend, as a fast shutdown
# ends every backend) flushes its open indices on the way out, weights
# included: the next session finds every page's weight, accesses and hot
# flag as the ended session last showed them.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_tiers 75 with_tiers optane_memory_32gb

crashed() {   # crashed <index> <options>
    local ix=$1 out
    midstream_kill_case "$ix" "$2" rtree
    out=$(q -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
            -c "SELECT 'fast=' || count(*) FROM festival.tier_pages('$ix') WHERE tier = 'fast'")
    tap_like "$out" '^mismatches=0$' "$ix: 17 windows answer as brute force does"
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

# weights: killed during their write
q -c "SET client_min_messages = warning" \
  -c "CREATE TABLE wcr_src (id bigint PRIMARY KEY, geom geometry)" \
  -c "INSERT INTO wcr_src SELECT i, pt(i) FROM generate_series(1, 500) i" \
  -c "SELECT festival.create_index('wcr', 'rtree', 'crash', '{\"page_size\": 1024, \"fast_device\": \"crash_fast\", \"placement\": \"hot\", \"hot_selectivity\": 1.0, \"fast_capacity\": 4}', 'wcr_src')" \
  -c "SELECT festival.build('wcr')" \
  -c "SELECT count(*) FROM (SELECT festival.query('wcr', ST_MakeEnvelope(0, 0, 300, 300)) FROM generate_series(1, 6)) x" \
  -c "SELECT festival.close('wcr')" \
  -c "CREATE TABLE wcr_saved AS SELECT page, weight, accesses FROM festival.tier_pages('wcr')" >/dev/null
weights="$(index_file wcr).tierhot"
tap_ok "$([ -s "$weights" ]; echo $?)" "wcr: the weights are a file beside the index file"
tap_like "$(q -c "SELECT count(*) FROM wcr_saved WHERE accesses > 0")" '^[1-9][0-9]*$' \
    "wcr: reopened after the close, the index has the closed session's weights"
before=$(q -c "SELECT count(*) FILTER (WHERE accesses > 0) || ' ' || count(*) FILTER (WHERE tier = 'fast') FROM festival.tier_pages('wcr')")
# a new session moves the hot set (the window moves) and dies writing the weights
out=$(psql -X -qAt -c "SET client_min_messages = warning" \
        -c "SELECT count(*) FROM (SELECT festival.query('wcr', ST_MakeEnvelope(600, 600, 800, 800)) FROM generate_series(1, 8)) x" \
        -c "SELECT 'flagged=' || count(*) FROM festival.tier_pages('wcr') WHERE hot AND tier = 'slow'" \
        -c "SELECT festival.inject_fault('wcr', 'tier_write', 0, 'crash')" \
        -c "SELECT festival.flush('wcr')" 2>&1)
# a promotion sets the page's fast-tier flag and the page moves at its
# buffer's next flush (Fevgas 2019, Alg. 11): the flush killed here
tap_like "$out" '^flagged=[1-9][0-9]*$' "wcr: the killed session flagged pages for promotion before the weights write"
tap_like "$out" 'server closed the connection|terminated abnormally|connection to server was lost' "wcr: its backend died during the weights write"
wait_for_server
tap_ok "$([ -s "$weights.tmp" ]; echo $?)" "wcr: it left half a temporary weights file"
# (the weights first: every read below changes them)
out=$(q -c "SELECT 'history_differs=' || count(*) FROM (SELECT page, weight, accesses FROM festival.tier_pages('wcr') WHERE accesses > 0 EXCEPT ALL SELECT * FROM wcr_saved) d" \
        -c "SELECT 'history_lost=' || count(*) FROM (SELECT * FROM wcr_saved WHERE accesses > 0 EXCEPT ALL SELECT page, weight, accesses FROM festival.tier_pages('wcr')) d" \
        -c "SELECT 'fast_not_hot=' || count(*) FROM festival.tier_pages('wcr') WHERE tier = 'fast' AND level IS NOT NULL AND NOT hot" \
        -c "SELECT 'rows=' || count(*) FROM festival.query('wcr', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
        -c "SELECT 'mismatches=' || brute_force_mismatches('wcr', 'wcr_src')" \
        -c "SELECT 'check=' || coalesce(string_agg(message, '; '), '') FROM festival.check('wcr')" \
        -c "SELECT festival.close('wcr')")
tap_unlike "$out" 'WARNING|ERROR' "wcr: the next open neither warns nor fails"
tap_like "$out" '^rows=500$' "wcr: every acknowledged object answers"
tap_like "$out" '^mismatches=0$' "wcr: 17 windows answer as brute force does"
tap_like "$out" '^check=$' "wcr: festival.check() is clean (the map is valid)"
tap_like "$out" '^history_differs=0$' "wcr: the weights and accesses are those of the last flush"
tap_like "$out" '^history_lost=0$' "wcr: none of them lost"
tap_like "$out" '^fast_not_hot=0$' "wcr: the pages the map made fast after them count as hot"

# weights: damaged
flip_byte "$weights" 40
out=$(psql -X -qAt -v VERBOSITY=verbose \
        -c "SELECT 'history=' || count(*) FILTER (WHERE accesses > 0) || ' fast_hot=' || bool_and(hot) FILTER (WHERE tier = 'fast' AND level IS NOT NULL) FROM festival.tier_pages('wcr')" \
        -c "SELECT 'rows=' || count(*) FROM festival.query('wcr', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
        -c "SELECT 'check=' || coalesce(string_agg(message, '; '), '') FROM festival.check('wcr')" \
        -c "SELECT festival.close('wcr')" 2>&1)
tap_like "$out" '^WARNING:  XX001: hot-page weights ".*\.tierhot" of index "wcr" are damaged: checksum mismatch$' \
    "wcr: a flipped byte of the weights is a data-corrupted warning"
tap_like "$out" '^DETAIL:  The index is intact' "wcr: with a detail"
tap_like "$out" '^rows=500$' "wcr: the index still serves all 500 objects"
tap_like "$out" '^check=$' "wcr: and festival.check() is clean"
tap_like "$out" '^history=0 fast_hot=true$' "wcr: its fast pages count as hot with no history"
out=$(q -c "SELECT 'rows=' || count(*) FROM festival.query('wcr', ST_MakeEnvelope(-10, -10, 2000, 2000))")
tap_unlike "$out" 'WARNING' "wcr: the close wrote the weights again"

# weights under hot_selectivity_tuning auto (s and the epoch's demotions are
# in them): a backend killed writing them leaves the s and clock of the
# last flush, which the next session goes on from
q -c "SET client_min_messages = warning" \
  -c "CREATE TABLE wau_src AS SELECT id, geom FROM wcr_src" \
  -c "SELECT festival.create_index('wau', 'rtree', 'crash', '{\"page_size\": 1024, \"fast_device\": \"crash_fast\", \"placement\": \"hot\", \"hot_selectivity\": 2.5, \"hot_selectivity_tuning\": \"auto\"}', 'wau_src')" \
  -c "SELECT festival.build('wau')" -c "SELECT festival.close('wau')" >/dev/null
saved=$(q -c "SELECT 'hot=' || (festival.stats('wau')->'hot'->>'selectivity') || ' ' || (festival.stats('wau')->'hot'->>'clock')")
tap_like "$saved" '^hot=(2\.25|2|1\.75|1\.5|1\.25) [0-9]+$' "wau: the build moved s below its start, 2.5, and the close saved it"
out=$(psql -X -qAt -c "SET client_min_messages = warning" \
        -c "SELECT count(*) FROM (SELECT festival.query('wau', ST_MakeEnvelope(0, 0, 300, 300 + 0 * i)) FROM generate_series(1, 1500) i) x" \
        -c "SELECT 'hot=' || (festival.stats('wau')->'hot'->>'selectivity') || ' ' || (festival.stats('wau')->'hot'->>'clock')" \
        -c "SELECT festival.inject_fault('wau', 'tier_write', 0, 'crash')" \
        -c "SELECT festival.flush('wau')" 2>&1)
moved=$(grep '^hot=' <<<"$out")
tap_ok "$([ -n "$moved" ] && [ "${moved% *}" != "${saved% *}" ]; echo $?)" "wau: the killed session moved s ($saved -> $moved)"
tap_like "$out" 'server closed the connection|terminated abnormally|connection to server was lost' "wau: its backend died during the weights write"
wait_for_server
out=$(q -c "SELECT 'hot=' || (festival.stats('wau')->'hot'->>'selectivity') || ' ' || (festival.stats('wau')->'hot'->>'clock')" \
        -c "SELECT 'rows=' || count(*) FROM festival.query('wau', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
        -c "SELECT 'mismatches=' || brute_force_mismatches('wau', 'wau_src')" \
        -c "SELECT 'check=' || coalesce(string_agg(message, '; '), '') FROM festival.check('wau')" \
        -c "SELECT festival.close('wau')")
tap_unlike "$out" 'WARNING|ERROR' "wau: the next open neither warns nor fails"
tap_ok "$(grep -qx "$saved" <<<"$out"; echo $?)" "wau: s and the clock are those of the last flush ($saved)"
tap_like "$out" '^rows=500$' "wau: every acknowledged object answers"
tap_like "$out" '^mismatches=0$' "wau: 17 windows answer as brute force does"
tap_like "$out" '^check=$' "wau: festival.check() is clean"

# map: killed during its write (the tier_map_write target, half-way through
# the temporary map) at the flush after 20 acknowledged inserts: the map in
# place (marked in use by the first of them) serves every object
q -c "SET client_min_messages = warning" \
  -c "CREATE TABLE mcr_src AS SELECT id, geom FROM wcr_src" \
  -c "SELECT festival.create_index('mcr', 'rtree', 'crash', '{\"page_size\": 1024, \"fast_device\": \"crash_fast\", \"placement\": \"level\"}', 'mcr_src')" \
  -c "SELECT festival.build('mcr')" -c "SELECT festival.close('mcr')" >/dev/null
out=$(psql -X -qAt -c "SET client_min_messages = warning" \
        -c "INSERT INTO mcr_src SELECT i, pt(i) FROM generate_series(501, 520) i" \
        -c "SELECT 'acked=' || count(festival.insert('mcr', id, geom)) FROM mcr_src WHERE id > 500" \
        -c "SELECT festival.inject_fault('mcr', 'tier_map_write', 0, 'crash')" \
        -c "SELECT festival.flush('mcr')" 2>&1)
tap_like "$out" '^acked=20$' "mcr: 20 inserts acknowledged"
tap_like "$out" 'server closed the connection|terminated abnormally|connection to server was lost' "mcr: the backend died during the flush's map write"
wait_for_server
tap_ok "$([ -s "$(index_file mcr).tiermap.tmp" ]; echo $?)" "mcr: it left half a temporary map"
out=$(q -c "SELECT 'rows=' || count(*) FROM festival.query('mcr', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
        -c "SELECT 'mismatches=' || brute_force_mismatches('mcr', 'mcr_src')" \
        -c "SELECT 'check=' || coalesce(string_agg(message, '; '), '') FROM festival.check('mcr')" \
        -c "SELECT festival.close('mcr')")
tap_like "$out" '^rows=520$' "mcr: every acknowledged object answers"
tap_like "$out" '^mismatches=0$' "mcr: 17 windows answer as brute force does"
tap_like "$out" '^check=$' "mcr: festival.check() is clean"

# weights: a backend ended by SIGTERM (the exit path of a clean shutdown)
q -c "SET client_min_messages = warning" \
  -c "CREATE TABLE wsd_src AS SELECT id, geom FROM wcr_src" \
  -c "SELECT festival.create_index('wsd', 'rtree', 'crash', '{\"page_size\": 1024, \"fast_device\": \"crash_fast\", \"placement\": \"level_hot\", \"hot_selectivity\": 1.0}', 'wsd_src')" \
  -c "SELECT festival.build('wsd')" -c "SELECT festival.close('wsd')" >/dev/null
victim_start "$tmp/wsd.err"
victim_ask "SET client_min_messages = warning" >/dev/null
victim_ask "SELECT count(*) FROM (SELECT festival.query('wsd', ST_MakeEnvelope(100, 100, 300, 300)) FROM generate_series(1, 6)) x" >/dev/null
victim_ask "CREATE TABLE wsd_seen AS SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages('wsd')" >/dev/null
tap_like "$(victim_ask "SELECT count(*) FROM wsd_seen WHERE accesses > 0")" '^[1-9][0-9]*$' "wsd: the ended session read pages"
q -c "SELECT pg_terminate_backend($VICTIM_BACKEND)" >/dev/null
victim_end
out=$(q -c "SET festival.open_timeout = '60s'" \
        -c "CREATE TEMP TABLE wsd_left AS SELECT page, CASE WHEN hot THEN 'fast' ELSE tier END AS tier, level, weight, accesses, hot FROM wsd_seen" \
        -c "SELECT 'differing=' || count(*) FROM ((SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages('wsd') EXCEPT ALL SELECT * FROM wsd_left) UNION ALL (SELECT * FROM wsd_left EXCEPT ALL SELECT page, tier, level, weight, accesses, hot FROM festival.tier_pages('wsd'))) d" \
        -c "SELECT 'check=' || coalesce(string_agg(message, '; '), '') FROM festival.check('wsd')" \
        -c "SELECT festival.close('wsd')")
tap_unlike "$out" 'WARNING|ERROR|not closed cleanly' "wsd: the next session opens it without a word"
# the ended session's close flushed its write buffers: the hot pages it saw
# still slow (flagged for promotion) moved to the fast tier (level_hot has
# no capacity to refuse them)
tap_like "$out" '^differing=0$' "wsd: every page's tier, weight, accesses and hot flag as the ended session left them (flagged pages moved at its close)"
tap_like "$out" '^check=$' "wsd: festival.check() is clean"

crash_end festival_crash_tiers
