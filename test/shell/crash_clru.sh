#!/usr/bin/env bash
# kill -9 in the middle of CLRU's cold-list write-back (Fevgas 2019 §3.2,
# Alg. 5: a full cold list whose oldest page is dirty is written as one
# batch), under FAST, eFIND and framework none, on grid files.
#
# Aim.  The fault layer sits below the cache and counts page writes since
# the index was opened; festival.inject_fault(ix, 'write', n, 'crash')
# lets n through and kills the backend (SIGKILL) at the next.  A twin index
# (same options, same build, same inserts in a fresh session) is probed
# first: for each insert, the page writes, cache write-backs and write
# submissions it caused.  The victim replays the twin's inserts and dies
# two pages into the batch chosen from the probe:
#   none       pages reach the device only when a full cold list is
#              written (no sync until flush/close), so an insert with one
#              submission of cache_clru_pages pages is a cold-list batch;
#   fast/efind a framework flush writes its pages into the cache, whose
#              evictions write cold-list batches, and syncs the cache once
#              at its end (one more submission): an insert with two or more
#              submissions therefore begins with a cold-list batch.
# That the crash hit that insert is checked too (every earlier insert was
# acknowledged, the chosen one was not).
#
# After the restart: FAST/eFIND replay their log, and framework none its
# journal (the write-through store journals its commits over a cache,
# nodestore/writethrough.c), and lose nothing acknowledged, check() clean
# (recovery_checks); each then accepts changes at once.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_clru 36
crash_schema
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('clru_aio', io => 'buffered', engine => 'libaio')" >/dev/null

CLRU_PAGES=4
# pages of 1 KB, a 16-page cache: 2 x 4 cold pages, 8 hot (6 directory,
# 2 data): cold lists fill within a few inserts or one framework flush
options() {
    local fw=$1 extra=""
    [ "$fw" != none ] && extra=", \"buffer_size\": 16384, \"flushing_unit\": 16"
    echo "{\"page_size\": 1024, \"framework\": \"$fw\", \"cache\": \"clru\", \"cache_size\": 16384, \"cache_clru_pages\": $CLRU_PAGES, \"extent\": [0, 0, 1000, 1000]$extra}"
}

# make_index <index> <options>: source table rows 1..2000, the index and
# its twin built from it and closed.
make_index() {
    q <<SQL >/dev/null
SET client_min_messages = warning;
SET festival.log_sync = never;
CREATE TABLE $1_src (id bigint PRIMARY KEY, geom geometry);
INSERT INTO $1_src SELECT i, pt(i) FROM generate_series(1, 2000) i;
SELECT festival.create_index('$1', 'gridfile', 'clru_aio', '$2', '$1_src');
SELECT festival.create_index('$1_twin', 'gridfile', 'clru_aio', '$2', '$1_src');
SELECT festival.build('$1'), festival.build('$1_twin');
SELECT festival.close('$1'), festival.close('$1_twin');
SQL
}

# probe <twin> <fw>: "insert writes_before" of the first insert from id 2051
# on whose writes begin with a cold-list batch (see the top)
probe() {
    local cond="dsub = 1 AND dw = $CLRU_PAGES AND dwb = $CLRU_PAGES"
    [ "$2" != none ] && cond="dsub >= 2 AND dw > $CLRU_PAGES AND dwb = dw"
    qv <<SQL
SET client_min_messages = warning;
CREATE TEMP TABLE probe (i bigint, w0 bigint, dw bigint, dwb bigint, dsub bigint);
DO \$\$
DECLARE w0 bigint; t jsonb; t1 jsonb; w1 bigint;
BEGIN
	FOR i IN 2001..2400 LOOP
		w0 := (festival.fault_status('$1')->>'write')::bigint;
		t := festival.stats('$1')->'totals';
		PERFORM festival.insert('$1', i, pt(i));
		w1 := (festival.fault_status('$1')->>'write')::bigint;
		t1 := festival.stats('$1')->'totals';
		INSERT INTO probe VALUES (i, w0, w1 - w0,
			(t1->>'cache_writebacks')::bigint - (t->>'cache_writebacks')::bigint,
			(t1->>'write_submissions')::bigint - (t->>'write_submissions')::bigint);
	END LOOP;
END \$\$;
SELECT i || ' ' || w0 FROM probe WHERE i >= 2051 AND $cond ORDER BY i LIMIT 1;
SQL
}

for fw in none fast efind; do
    ix="gc_$fw"
    make_index "$ix" "$(options $fw)"
    read -r target before <<<"$(probe "${ix}_twin" $fw)"
    tap_ok "$([ -n "$target" ] && [ "$before" -gt 0 ]; echo $?)" \
        "$ix: the twin's insert $target begins with a cold-list batch (after $before page writes)"
    [ -z "$target" ] && target=2100 before=0

    ACKED=2000
    victim_start "$tmp/$ix.err"
    victim_ask "SELECT festival.inject_fault('$ix', 'write', $before + 2, 'crash')" >/dev/null
    victim_insert "$ix" 2001 $((target - 1))
    victim_ask "$(insert_sql "$ix" "$target")" >/dev/null
    victim_end
    tap_is "$ACKED" "$((target - 1))" \
        "$ix: the backend died two pages into that batch, in insert $target (all before acknowledged)"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"

    # nothing acknowledged is lost: the log or journal restores what the
    # cache held
    recovery_checks "$ix"
    out=$(q -c "WITH s AS (INSERT INTO ${ix}_src VALUES (5001, pt(5001)) RETURNING id, geom) SELECT festival.insert('$ix', id, geom) FROM s")
    tap_is "$out" "t" "$ix: and accepts changes at once"
done

crash_end festival_crash_clru
