#!/usr/bin/env bash
# The write-through store hands its pages to a page cache of the lru family
# unsealed, and the cache computes each page's checksum when the page leaves
# it for the device (cache/cache.c, DESIGN.md "Sealed when they leave the
# cache").  Whatever happens, every page in the file must carry its
# checksum: a one-at-a-time build under a cache of 16 pages (write-backs at
# evictions all the time) is
#   1. killed (kill -9) in the middle, once the file has grown: after the restart
#      every page of the file is all zeros or verifies (CRC32C computed here,
#      independently of festival), and a new build completes the index;
#   2. failed by the fault layer (EIO on a write-back, ENOSPC on a later
#      one): the error is raised, the index is refused until it is built
#      again, and the file's pages verify too; after a build, check() is
#      clean and a window answers as brute force.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"
source "$(dirname "$0")/lib/pages.bash"
crash_begin festival_crash_cache_seal 15

scattered_points pts 60000
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('crash_cs', io => 'buffered');
SELECT festival.create_index('cs', 'rtree', 'crash_cs',
    '{"page_size": 1024, "split": "quadratic", "cache": "lru", "cache_size": 16384}', 'pts');
SQL

file=$(index_file cs)
tap_ok "$([ -n "$file" ]; echo $?)" "the index file is known: $file"

# 1. kill -9 in the middle of the build
victim_start "$tmp/cs.err"
# killed once the file holds 300 pages (the build writes about 3800): the
# cache has written pages back since the build began.  Batches of 2048 rows
# (festival.build_commit_rows): by default a batch holds maintenance_work_mem
# of pages, which the whole index fits, so the file would grow only at the end
victim_send "SET festival.build_commit_rows = 2048"
victim_send "SELECT festival.build('cs')"
size=0
for _ in $(seq 1 3000); do
    size=$(stat -c %s "$file" 2>/dev/null || echo 0)
    [ "$size" -ge $((300 * 1024)) ] && break
    sleep 0.01
done
victim_kill
tap_ok "$([ "$size" -ge $((300 * 1024)) ] && [ "$size" -lt $((3700 * 1024)) ]; echo $?)" \
    "the build was killed with SIGKILL in the middle, the file at $((size / 1024)) pages"
wait_for_server
tap_ok $? "the server is back after the crash restart"

out=$(verify_pages "$file" 1024)
tap_like "$out" '^pages=([3-9]|[1-9][0-9]+) ' "the crashed build left pages in the file ($out)"
tap_like "$out" ' bad=0$' "every page the cache wrote back before the kill carries its checksum"

out=$(q -c "SET festival.progress_interval = 0" \
        -c "SELECT 'built=' || festival.build('cs')" \
        -c "SELECT 'flushed=' || festival.flush('cs')" \
        -c "SELECT 'check=' || count(*) FROM festival.check('cs')")
tap_like "$out" '^built=60000$' "a new build inserts every row"
tap_like "$out" '^check=0$' "check() is clean afterwards"
out=$(verify_pages "$file" 1024)
tap_like "$out" ' zero=0 bad=0$' "after the build and its flush every page of the file verifies ($out)"

# 2. faults on the cache's write-backs during a build
out=$(q -c "SET festival.progress_interval = 0" \
        -c "SELECT festival.inject_fault('cs', 'write', 40, 'EIO')" \
        -c "SELECT festival.build('cs')" 2>&1)
tap_like "$out" 'ERROR' "EIO on the 41st page written during a build is raised ($(printf '%s' "$out" | grep ERROR | head -n 1))"
out=$(q -c "SELECT festival.clear_fault('cs')" \
        -c "SELECT count(*) FROM festival.query('cs', ST_MakeEnvelope(0, 0, 200000, 200000))" 2>&1)
tap_like "$out" 'incompletely built|damaged|suspect|refuse' "the failed build leaves the index refused until it is built ($(printf '%s' "$out" | grep ERROR | head -n 1))"
out=$(verify_pages "$file" 1024)
tap_like "$out" ' bad=0$' "every page the failed build left verifies ($out)"

out=$(q -c "SET festival.progress_interval = 0" \
        -c "SELECT festival.inject_fault('cs', 'write', 200, 'ENOSPC')" \
        -c "SELECT festival.build('cs')" 2>&1)
tap_like "$out" 'ERROR' "ENOSPC on the 201st page written during a build is raised"
out=$(q -c "SELECT festival.clear_fault('cs')" \
        -c "SET festival.progress_interval = 0" \
        -c "SELECT 'built=' || festival.build('cs')" \
        -c "SELECT 'flushed=' || festival.flush('cs')" \
        -c "SELECT 'check=' || count(*) FROM festival.check('cs')" \
        -c "SELECT 'mismatches=' || count(*) FROM ((SELECT id FROM festival.query('cs', ST_MakeEnvelope(10000, 20000, 40000, 45000)) EXCEPT ALL
                 SELECT id FROM pts WHERE ST_Intersects(geom, ST_MakeEnvelope(10000, 20000, 40000, 45000))) UNION ALL
                (SELECT id FROM pts WHERE ST_Intersects(geom, ST_MakeEnvelope(10000, 20000, 40000, 45000)) EXCEPT ALL
                 SELECT id FROM festival.query('cs', ST_MakeEnvelope(10000, 20000, 40000, 45000)))) d")
tap_like "$out" '^check=0$' "after the faults a build completes and check() is clean"
tap_like "$out" '^mismatches=0$' "a window answers as brute force over the source"
out=$(verify_pages "$file" 1024)
tap_like "$out" ' zero=0 bad=0$' "and every page of the file verifies ($out)"

crash_end festival_crash_cache_seal
