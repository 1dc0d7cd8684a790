#!/usr/bin/env bash
# kill -9 in the middle of the xBR+-tree's bulk insertion (festival.insert_many)
# and of its four-phase bulk loads (Fevgas 2019 §3.6).
#
# 1. festival.insert_many of 3000 points into an xBR+-tree of 2000, the
#    backend killed (festival.inject_fault(..., 'crash')) at a page read of
#    the insertion (before anything is written), at a page write of its
#    commit, or at the write or sync of its log group.  The batch is one
#    modification, never acknowledged here, and nothing acknowledged before
#    it may be lost:
#    - with a journal (write-through over an lru cache), FAST and eFIND,
#      whose logs hold the batch as one group, the index holds all of the
#      batch or none of it, no object twice, takes changes at once and
#      checks clean;
#    - write-through without a journal: every acknowledged object is there;
#      an index that holds part of the batch was not closed cleanly and
#      refuses changes (suspect) until check()/build(); a build makes it
#      equal brute force again.
#    Methods 'bulk_ssd', 'bulk' (the HDD original) and 'insert'.
# 2. festival.build(..., 'four_phase' | 'four_phase_ssd') of 20000 points
#    in maintenance_work_mem = 1MB (many blocks merged), killed at its k-th
#    page write: afterwards the index is refused as incompletely built
#    (55000) or whole; a build makes it equal brute force, check() clean.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

XBR='{"page_size": 1024, "extent": [0, 0, 1000, 1000]}'
OPTS_NONE=$XBR
OPTS_LRU='{"page_size": 1024, "extent": [0, 0, 1000, 1000], "cache": "lru", "cache_size": 16384}'
OPTS_FAST='{"page_size": 1024, "extent": [0, 0, 1000, 1000], "framework": "fast", "buffer_size": 16384, "flushing_unit": 4}'
OPTS_EFIND='{"page_size": 1024, "extent": [0, 0, 1000, 1000], "framework": "efind", "buffer_size": 16384, "flushing_unit": 4}'
BATCH=3000
# config:method:target:position (config none is not atomic under a crash)
# (position "late": five page writes before the end of the commit, where it
# overwrites existing nodes, counted on a twin)
TRIALS="none:bulk_ssd:read:3 none:bulk_ssd:write:0 none:bulk_ssd:write:40 none:bulk_ssd:write:late
none:bulk:write:late none:insert:write:late
lru:bulk_ssd:read:3 lru:bulk_ssd:log_write:0 lru:bulk_ssd:log_sync:0 lru:bulk_ssd:write:5
fast:bulk_ssd:read:3 fast:bulk_ssd:log_write:0 fast:bulk_ssd:log_sync:0 fast:bulk_ssd:write:1
efind:bulk_ssd:read:3 efind:bulk_ssd:log_write:0 efind:bulk_ssd:log_sync:0 efind:bulk_ssd:write:1"
LOAD_METHODS="four_phase four_phase_ssd"

ntrials=$(echo $TRIALS | wc -w)
nnone=$(echo $TRIALS | tr ' ' '\n' | grep -c '^none:')
crash_begin festival_crash_xbr $(( nnone * 6 + (ntrials - nnone) * 8 + 2 * 3 * 5 )) with_device

# 1. kill -9 in festival.insert_many ------------------------------------------
n=0
for t in $TRIALS; do
    IFS=: read -r config method target pos <<<"$t"
    case $config in
        none) opts=$OPTS_NONE ;; lru) opts=$OPTS_LRU ;; fast) opts=$OPTS_FAST ;; efind) opts=$OPTS_EFIND ;;
    esac
    n=$((n + 1))
    ix="xi$n"
    if [ "$pos" = late ]; then
        twin="${ix}_twin"
        crash_index "$twin" "$opts" 2000 xbrtree
        q -c "CREATE TABLE ${twin}_batch AS SELECT i AS id, pt(i) AS geom FROM generate_series(100001, $((100000 + BATCH))) i" >/dev/null
        pos=$(qv -c "SELECT festival.stats('$twin')->'totals'->>'pages_written'" \
                 -c "SELECT festival.insert_many('$twin', '${twin}_batch', method => '$method')" \
                 -c "SELECT festival.stats('$twin')->'totals'->>'pages_written'" |
              awk 'NR == 1 { a = $1 } END { print $1 - a - 5 }')
    fi
    crash_index "$ix" "$opts" 2000 xbrtree
    q -c "CREATE TABLE ${ix}_batch AS SELECT i AS id, pt(i) AS geom FROM generate_series(100001, $((100000 + BATCH))) i" >/dev/null
    victim_start "$tmp/$ix.err"
    victim_ask "SET festival.log_sync = operation" >/dev/null
    victim_ask "SELECT festival.inject_fault('$ix', '$target', $pos, 'crash')" >/dev/null
    r=$(victim_ask "SELECT festival.insert_many('$ix', '${ix}_batch', method => '$method')")
    victim_end
    what="$ix ($config, $method, crash at $target $pos)"
    tap_is "$r" "" "$what: the backend died in insert_many"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"
    out=$(q -c "CREATE TEMP TABLE got AS SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
            -c "SELECT 'missing=' || count(*) FROM ${ix}_src s WHERE NOT EXISTS (SELECT FROM got g WHERE g.id = s.id)" \
            -c "SELECT 'batch=' || count(DISTINCT id) FROM got WHERE id > 100000" \
            -c "SELECT 'duplicates=' || count(*) - count(DISTINCT id) FROM got" \
            -c "SELECT 'change=' || festival.insert('$ix', 999999, pt(999999))")
    tap_like "$out" '^missing=0$' "$ix: every acknowledged object is in the index"
    batch=$(printf '%s\n' "$out" | sed -n 's/^batch=//p')
    if [ "$config" = none ]; then
        # part of a batch only in an index that refuses changes until repaired
        if [ "${batch:-0}" -gt 0 ] && [ "${batch:-0}" -lt "$BATCH" ]; then
            tap_like "$out" 'not closed cleanly.*|ERROR:  XX001' \
                "$ix: it holds $batch of the batch's $BATCH objects and is suspect: changes refused"
        else
            tap_ok 0 "$ix: it holds ${batch:-0} of the batch's $BATCH objects"
        fi
        out=$(q -c "SET client_min_messages = warning" \
                -c "SELECT 'built=' || festival.build('$ix')" \
                -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
                -c "SELECT 'errors=' || count(*) FROM festival.check('$ix') WHERE severity = 'error'")
        tap_like "$out" '^mismatches=0$' "$ix: after a build it answers as brute force"
        tap_like "$out" '^errors=0$' "$ix: and check() is clean"
        continue
    fi
    tap_like "$out" "^batch=(0|$BATCH)$" "$ix: the batch is all there or not at all (batch=$batch)"
    tap_like "$out" '^duplicates=0$' "$ix: no object is in the index twice"
    tap_like "$out" '^change=true$' "$ix: the index takes changes at once"
    # the source table as the index now is: the batch when it is there, 999999
    out=$(q -c "SET client_min_messages = warning" \
            -c "INSERT INTO ${ix}_src SELECT * FROM ${ix}_batch WHERE $([ "$batch" = "$BATCH" ] && echo true || echo false)" \
            -c "INSERT INTO ${ix}_src VALUES (999999, pt(999999))" \
            -c "SELECT 'errors=' || count(*) FROM festival.check('$ix') WHERE severity = 'error'" \
            -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')")
    tap_like "$out" '^errors=0$' "$ix: check() is clean"
    tap_like "$out" '^mismatches=0$' "$ix: and it answers as brute force"
done

# 2. kill -9 in a four-phase bulk load ----------------------------------------
q -c "CREATE TABLE loads_src AS SELECT i::bigint AS id, pt(i) AS geom FROM generate_series(1, 20000) i" >/dev/null
for method in $LOAD_METHODS; do
    # the page writes of the whole build, counted on a twin
    twin="xl_${method}_twin"
    q -c "SET client_min_messages = warning" \
      -c "SELECT festival.create_index('$twin', 'xbrtree', 'crash', '$XBR', 'loads_src')" >/dev/null
    total=$(qv -c "SET maintenance_work_mem = '1MB'" \
               -c "SELECT festival.stats('$twin')->'totals'->>'pages_written'" \
               -c "SELECT festival.build('$twin', '$method')" \
               -c "SELECT festival.stats('$twin')->'totals'->>'pages_written'" |
            awk 'NR == 1 { a = $1 } END { print $1 - a }')
    for k in 5 $((total / 2)) $((total - 2)); do
        ix="xl_${method}_$k"
        q -c "SET client_min_messages = warning" \
          -c "SELECT festival.create_index('$ix', 'xbrtree', 'crash', '$XBR', 'loads_src')" \
          -c "SELECT festival.build('$ix', 'bulk')" -c "SELECT festival.close('$ix')" >/dev/null
        victim_start "$tmp/$ix.err"
        victim_ask "SET maintenance_work_mem = '1MB'" >/dev/null
        victim_ask "SELECT festival.inject_fault('$ix', 'write', $k, 'crash')" >/dev/null
        built=$(victim_ask "SELECT festival.build('$ix', '$method')")
        victim_end
        tap_is "$built" "" "$ix: the backend died in the $method build, at page write $k of $total"
        wait_for_server
        tap_ok $? "$ix: the server is back"
        out=$(q -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', 'loads_src')" \
                -c "SELECT 'errors=' || count(*) FROM festival.check('$ix') WHERE severity = 'error'")
        if grep -q 'incompletely built' <<<"$out"; then
            tap_ok 0 "$ix: refuses queries as incompletely built"
        else
            tap_like "$(tr '\n' ' ' <<<"$out")" 'mismatches=0 .*errors=0' \
                "$ix: or is whole, equal to brute force, check() clean"
        fi
        out=$(q -c "SET client_min_messages = warning" -c "SET maintenance_work_mem = '1MB'" \
                -c "SELECT festival.build('$ix', '$method')" \
                -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', 'loads_src')" \
                -c "SELECT 'errors=' || count(*) FROM festival.check('$ix') WHERE severity = 'error'")
        tap_like "$out" '^mismatches=0$' "$ix: a build makes it equal brute force again"
        tap_like "$out" '^errors=0$' "$ix: and check() clean"
    done
done

crash_end festival_crash_xbr
