#!/usr/bin/env bash
# The mmap engine (src/device/engine_mmap.c): reads copied out of a shared
# mapping of the index file, writes as the sync engine's.
#
# Checked: a quadratic R-tree built one insert at a time on an mmap device
# grows its file past several remappings of the mapping and is, node for
# node, the tree a sync device builds; its windows equal PostGIS's answer
# and its kNN the sync index's.  Then, in one session holding the index
# open, the file is cut short behind festival's back: the next query touches
# a mapped page past the end of the file, which raises SIGBUS.  The engine's
# guard must turn that into an I/O error (58030) naming the file and page,
# the session must go on, and the server must not restart.  A rebuild in the
# same session (the file is truncated and grows again under the same
# mapping) is again the sync tree, and check() is clean.  Last, a SIGBUS
# that another process sends to a backend holding an mmap index open (its
# handler installed) must end that backend as it would without the handler,
# which restarts the server.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

fresh_database festival_engine_mmap
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
    tap_skip_all "needs a server on a local Unix socket (the test signals a backend)"
fi
tap_plan 12

scattered_points em_src 20000
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('em_mmap', io => 'buffered', engine => 'mmap')" \
  -c "SELECT festival.create_device('em_sync', io => 'buffered')" \
  -c "SELECT festival.create_index('em_mm', 'rtree', 'em_mmap', '{\"split\": \"quadratic\", \"page_size\": 1024}', 'em_src')" \
  -c "SELECT festival.create_index('em_sy', 'rtree', 'em_sync', '{\"split\": \"quadratic\", \"page_size\": 1024}', 'em_src')" \
  -c "SELECT festival.build('em_mm', 'insert')" \
  -c "SELECT festival.build('em_sy', 'insert')" >/dev/null

path=$(index_file em_mm)
size=$(stat -c %s "$path")
tap_ok "$([ "$size" -gt $((1024 * 1024)) ]; echo $?)" \
    "the mmap index's file grew past 1 MB ($size bytes): the 256 kB mapping was mapped again at least twice"

sync_digest=$(node_digest em_sy)
tap_is "$(node_digest em_mm)" "$sync_digest" "the tree built on the mmap device is the sync device's, node for node"

# 30 windows against PostGIS: ids missing or extra, summed
q -c "CREATE TABLE em_win AS SELECT w AS wid, ST_MakeEnvelope((w * 3331) % 90000, (w * 7717) % 90000,
                                                         (w * 3331) % 90000 + 2000 + w * 300,
                                                         (w * 7717) % 90000 + 1500 + w * 200) AS g
      FROM generate_series(1, 30) w" >/dev/null
wrong=$(qv -c "SELECT count(*) FROM (
                 (SELECT w.wid, s.id FROM em_win w JOIN em_src s ON s.geom && w.g
                  EXCEPT SELECT w.wid, q.id FROM em_win w, LATERAL festival.query('em_mm', w.g) q)
                 UNION ALL
                 (SELECT w.wid, q.id FROM em_win w, LATERAL festival.query('em_mm', w.g) q
                  EXCEPT SELECT w.wid, s.id FROM em_win w JOIN em_src s ON s.geom && w.g)) d")
answers=$(qv -c "SELECT count(*) FROM em_win w JOIN em_src s ON s.geom && w.g")
tap_is "$wrong" 0 "30 windows over the mmap index answer as PostGIS ($answers ids)"
knn_diff=$(qv -c "SELECT count(*) FROM em_win w,
                    LATERAL (SELECT * FROM festival.knn('em_mm', ST_Centroid(w.g), 10)
                             EXCEPT SELECT * FROM festival.knn('em_sy', ST_Centroid(w.g), 10)) d")
tap_is "$knn_diff" 0 "kNN (k = 10) at the 30 windows' centres: the mmap index answers as the sync one"

# one session: query (the file is mapped), cut the file to its two meta
# pages behind festival's back, query again, then rebuild
started=$(qv -c "SELECT pg_postmaster_start_time()")
out=$(psql -X -qAt -v VERBOSITY=verbose 2>&1 <<EOF
SELECT 'pid=' || pg_backend_pid();
SELECT 'before=' || count(*) FROM festival.query('em_mm', ST_MakeEnvelope(0, 0, 100003, 99991));
\! truncate -s 2048 '$path'
SELECT 'after=' || count(*) FROM festival.query('em_mm', ST_MakeEnvelope(0, 0, 100003, 99991));
SELECT 'pid=' || pg_backend_pid();
SET client_min_messages = warning;
SELECT 'rebuilt=' || festival.build('em_mm', 'insert');
EOF
)
tap_like "$out" '^before=20000$' "the session answered from the mapped index before the cut"
tap_like "$out" 'ERROR:  58030: could not read page [0-9]+ of index file ".*": Input/output error' \
    "the read of a page past the cut end fails with an I/O error (58030) naming the file and page"
tap_like "$out" 'DETAIL:  The kernel could not bring the mapped page in \(SIGBUS\)' \
    "its detail says the mapped page could not be brought in"
pids=$(grep -c '^pid=' <<<"$out"); distinct=$(grep '^pid=' <<<"$out" | sort -u | wc -l)
tap_ok "$([ "$pids" = 2 ] && [ "$distinct" = 1 ] && [ "$(qv -c "SELECT pg_postmaster_start_time()")" = "$started" ]; echo $?)" \
    "the same backend went on after the error and the server did not restart"
[ "$pids" = 2 ] || sed 's/^/#   /' <<<"$out"
tap_like "$out" '^rebuilt=20000$' "the index was rebuilt in that session (its file truncated and grown again under the mapping)"
q -c "SELECT festival.close('em_mm')" >/dev/null
tap_ok "$([ "$(node_digest em_mm)" = "$sync_digest" ] && [ "$(qv -c "SELECT count(*) FROM festival.check('em_mm')")" = 0 ]; echo $?)" \
    "the rebuilt tree is the sync one again and check() is clean"

# a SIGBUS sent by another process is not the guard's: the backend ends
tmp=$(mktemp -d)
victim_start "$tmp/victim.err"
answer=$(victim_ask "SELECT count(*) FROM festival.query('em_mm', ST_MakeEnvelope(0, 0, 100003, 99991))")
tap_is "$answer" 20000 "a session holding the mmap index open (its SIGBUS handler installed) answered"
reset_before=$(stats_reset)
kill -BUS "$VICTIM_BACKEND"
victim_end
wait_for_server
tap_ok "$([ "$(stats_reset)" != "$reset_before" ] &&
          [ "$(qv -c "SELECT count(*) FROM pg_stat_activity WHERE pid = $VICTIM_BACKEND")" = 0 ]; echo $?)" \
    "a SIGBUS another process sent to that backend ended it, as without the handler (the server restarted)"
rm -rf "$tmp"
tap_done
