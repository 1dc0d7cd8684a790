#!/usr/bin/env bash
# kill -9 in the write-through store's journal (nodestore/writethrough.c) and in builds
# of write-through indices over a chain that defers writes: a page cache
# (lru, clru) or a fast device (all_fast, no cache).
#
# 1. At the journal: festival.inject_fault(ix, 'log_write' | 'log_sync', 0,
#    'crash') kills the backend as the next insert writes (or syncs) its
#    group.  After the restart every acknowledged insert is in the index
#    (recovery_checks: compared with the transactional source table, check()
#    clean), the interrupted one at most besides, and changes are accepted.
# 2. In a build: the index, built and closed, is rebuilt ('insert' and
#    'str') and the backend killed at its k-th page write (the fault layer
#    counts device page writes since the open: the reset's meta writes come
#    first, then the cache's write-backs; under all_fast, on the fast
#    device).  After the restart the index is
#    whole (the old one, or the new one once its last meta write is done:
#    every source row answered, check() clean),
#    or refuses queries as incompletely built; never a wrong answer.  A
#    build() then makes it equal the source again.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

OPTS_LRU='{"page_size": 1024, "cache": "lru", "cache_size": 16384}'
OPTS_CLRU='{"page_size": 1024, "cache": "clru", "cache_size": 16384, "cache_clru_pages": 2}'
OPTS_TIER='{"page_size": 1024, "fast_device": "crash_fast", "placement": "all_fast"}'
BUILD_POINTS="0 2 3 5 40"

crash_begin festival_crash_journal $((3 * 2 * 11 + 2 * 2 * 8 * 5)) with_device
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('crash_fast', io => 'buffered')" >/dev/null

# 1. kill -9 at the journal's write and sync
n=0
for opts in "$OPTS_LRU" "$OPTS_CLRU" "$OPTS_TIER"; do
    for target in log_write log_sync; do
        n=$((n + 1))
        ix="jn$n"
        crash_index "$ix" "$opts" 500
        ACKED=500
        victim_start "$tmp/$ix.err"
        victim_ask "SET festival.log_sync = operation" >/dev/null
        victim_insert "$ix" 501 560
        victim_ask "SELECT festival.inject_fault('$ix', '$target', 0, 'crash')" >/dev/null
        victim_ask "$(insert_sql "$ix" 561)" >/dev/null
        victim_end
        tap_is "$ACKED" 560 "$ix ($target): 60 inserts acknowledged, the backend died in the 61st"
        wait_for_server
        tap_ok $? "$ix: the server is back after the crash restart"
        # the group of the interrupted insert is absent (killed before its
        # write) or whole (written, then killed before its sync): then the
        # index holds it, which recovery_checks allows
        recovery_checks "$ix"
        out=$(q -c "$(insert_sql "$ix" 9000)")
        tap_is "$out" "t" "$ix: and accepts changes at once"
    done
done

# 2. kill -9 in a rebuild
n=0
for opts in "$OPTS_LRU" "$OPTS_TIER"; do
    # all_fast keeps every page, the meta too, on the fast device
    target=write
    [ "$opts" = "$OPTS_TIER" ] && target=fast:write
    for method in insert str; do
        # the page writes of the whole rebuild, counted on a twin: the last
        # ones are the build's final meta writes
        twin="jt_${target%%:*}_$method"
        crash_index "$twin" "$opts" 800
        counter=pages_written
        [ "$target" = fast:write ] && counter=tier_fast_pages_written
        total=$(qv -c "SELECT festival.stats('$twin')->'totals'->>'$counter'" \
                   -c "SELECT festival.build('$twin', '$method')" \
                   -c "SELECT festival.stats('$twin')->'totals'->>'$counter'" |
                awk 'NR == 1 { a = $1 } END { print $1 - a }')
        for k in $BUILD_POINTS $((total - 4)) $((total - 2)) $((total - 1)); do
            n=$((n + 1))
            ix="jb$n"
            crash_index "$ix" "$opts" 800
            victim_start "$tmp/$ix.err"
            victim_ask "SELECT festival.inject_fault('$ix', '$target', $k, 'crash')" >/dev/null
            built=$(victim_ask "SELECT festival.build('$ix', '$method')")
            victim_end
            tap_is "$built" "" "$ix ($method): the backend died in the build, at page write $k"
            wait_for_server
            tap_ok $? "$ix: the server is back"
            out=$(q -c "SELECT 'n=' || count(*) FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
                    -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
                    -c "SELECT 'errors=' || count(*) FROM festival.check('$ix') WHERE severity = 'error'")
            if grep -q 'incompletely built' <<<"$out"; then
                tap_ok 0 "$ix: refuses queries as incompletely built"
            else
                tap_like "$(tr '\n' ' ' <<<"$out")" 'n=800 .*mismatches=0 .*errors=0' \
                    "$ix: or is whole (the old index or the new one), equal to brute force, check() clean"
            fi
            out=$(q -c "SET client_min_messages = warning" -c "SELECT festival.build('$ix', '$method')" \
                    -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
                    -c "SELECT 'errors=' || count(*) FROM festival.check('$ix') WHERE severity = 'error'")
            tap_like "$out" '^mismatches=0$' "$ix: build() makes it equal brute force again"
            tap_like "$out" '^errors=0$' "$ix: and check() clean"
        done
    done
done

crash_end festival_crash_journal
