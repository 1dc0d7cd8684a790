#!/usr/bin/env bash
# A build inserts the source's rows in the order its scan returns them, and
# that order decides the tree.  With synchronize_seqscans on (PostgreSQL's
# default), a sequential scan of a table larger than a quarter of
# shared_buffers starts where the last scan of the table stopped: after a
# cursor closed half-way (or a build cancelled half-way), the next build of
# the table inserted its rows rotated and built another tree, with other
# counts.  festival's source scans run with the setting off
# (src/sql/source.c, source_scan_begin).
#
# Checked on a table of about 1.3 times that size (points on every 25th row,
# a 500-byte filler on every row): that a scan abandoned half-way makes the
# next plain SELECT start mid-table (else the test would show nothing); that
# a quadratic R-tree built after such a scan is node for node the tree built
# before it, and the same for festival.insert_many over the table; and that
# the session's synchronize_seqscans is on again after a build, including
# one that fails.
source "$(dirname "$0")/lib/tap.bash"

fresh_database festival_build_order
# shared_buffers in 8 kB blocks; a scan synchronises above a quarter of it
quarter=$(qv -c "SELECT setting::bigint / 4 FROM pg_settings WHERE name = 'shared_buffers'")
if [ "$quarter" -gt 25600 ]; then
    tap_skip_all "shared_buffers is above 800 MB: the table that shows synchronised scans would take too long to fill"
fi
tap_plan 7

rows=$(( (quarter * 13 / 10 + 100) * 14 ))
q -c "CREATE TABLE bo_src (id bigint, geom geometry, pad text)" \
  -c "INSERT INTO bo_src SELECT i, CASE WHEN i % 25 = 0 THEN ST_MakePoint((i::bigint * 7919) % 10007, (i::bigint * 104729) % 9973) END,
      repeat('x', 500) FROM generate_series(1, $rows) i" \
  -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('bo_dev', io => 'buffered')" >/dev/null
tap_ok "$([ "$(qv -c "SELECT pg_relation_size('bo_src') / 8192 > $quarter")" = t ]; echo $?)" \
    "the source table is larger than a quarter of shared_buffers ($rows rows)"

# abandon: a scan of the table stopped half-way (a cursor closed early)
abandon() {
    q -c "BEGIN" -c "DECLARE c CURSOR FOR SELECT id FROM bo_src" -c "MOVE $((rows / 2)) FROM c" \
      -c "ROLLBACK" >/dev/null
}
make_index() {
    q -c "SET client_min_messages = warning" \
      -c "SELECT festival.create_index('$1', 'rtree', 'bo_dev', '{\"split\": \"quadratic\", \"page_size\": 1024}'::jsonb, $2)" \
      >/dev/null
}

make_index bo_before "'bo_src'::regclass"
q -c "SELECT festival.build('bo_before', 'insert')" >/dev/null
before=$(node_digest bo_before)

abandon
first=$(qv -c "SELECT id FROM bo_src LIMIT 1")
tap_ok "$([ "$first" -gt 1 ]; echo $?)" \
    "after a scan abandoned half-way a plain scan starts mid-table (at id $first)"

abandon
make_index bo_after "'bo_src'::regclass"
q -c "SELECT festival.build('bo_after', 'insert')" >/dev/null
after=$(node_digest bo_after)
tap_ok "$([ -n "$before" ] && [ "$before" = "$after" ]; echo $?)" \
    "a build after an abandoned scan is node for node the build before it"

# festival.insert_many over the table: fresh, and after an abandoned scan
make_index bo_many_fresh NULL
q -c "SELECT festival.insert_many('bo_many_fresh', 'bo_src')" >/dev/null
abandon
make_index bo_many_after NULL
q -c "SELECT festival.insert_many('bo_many_after', 'bo_src')" >/dev/null
fresh=$(node_digest bo_many_fresh)
tap_ok "$([ -n "$fresh" ] && [ "$fresh" = "$(node_digest bo_many_after)" ]; echo $?)" \
    "festival.insert_many after an abandoned scan inserts in the table's order as well"
tap_is "$(qv -c "SELECT count(*) FROM festival.query('bo_many_after', ST_MakeEnvelope(0, 0, 10007, 9973))")" \
    "$(qv -c "SELECT count(*) FROM bo_src WHERE geom IS NOT NULL")" "insert_many inserted every point"

make_index bo_again "'bo_src'::regclass"
tap_is "$(qv -c "SELECT festival.build('bo_again', 'insert')" -c "SHOW synchronize_seqscans" | tail -1)" \
    "on" "synchronize_seqscans is on again after a build"
q -c "UPDATE bo_src SET id = NULL WHERE id = $((rows / 50 * 25))" >/dev/null
make_index bo_null "'bo_src'::regclass"
tap_is "$(psql -X -qAt -c "SELECT festival.build('bo_null', 'insert')" -c "SHOW synchronize_seqscans" 2>/dev/null | tail -1)" \
    "on" "and after a build that fails (a NULL id half-way)"

for ix in bo_before bo_after bo_many_fresh bo_many_after bo_again bo_null; do
    qv -c "SELECT festival.drop_index('$ix')" >/dev/null
done
tap_done
