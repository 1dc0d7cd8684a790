#!/usr/bin/env bash
# LB-Grid loads its bucket table from its log pages at the first use of an
# opened index.  A statement_timeout that cancels a session's first
# statement somewhere in that load (issue 21, item 4) must leave nothing
# that looks loaded: the session's next statements load the table again,
# answer what brute force answers and keep their changes.
#
# An index of 100,000 points on 1 kB pages (some 4,700 pages: the load
# takes tens of milliseconds) is closed; then sessions start whose first
# statement (a kNN) runs under statement_timeout from 1 to 40 ms, so the
# cancel falls at many points of the load (or after it).  In each session,
# after the cancel or not: a window query equal to brute force over the
# source table, one insert (kept in the source table too), the session
# ends.  At the end the index holds exactly the source table and check()
# is clean.  Every session whose kNN was cancelled is counted; at least
# one must be, or the test proved nothing.
source "$(dirname "$0")/lib/tap.bash"

fresh_database festival_lb_cancel
TIMEOUTS="1 2 3 4 5 6 8 10 12 15 18 22 26 30 35 40"
tap_plan $(( $(wc -w <<<"$TIMEOUTS") + 4 ))

scattered_points lbc_src 100000
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('lbc', io => 'buffered')" \
  -c "SELECT festival.create_index('lbc_ix', 'lbgrid', 'lbc', '{\"page_size\": 1024, \"extent\": [0, 0, 100003, 99991]}', 'lbc_src')" \
  -c "SELECT festival.build('lbc_ix')" \
  -c "SELECT festival.close('lbc_ix')" >/dev/null

window="ST_MakeEnvelope(20000, 20000, 60000, 45000)"
cancelled=0
for t in $TIMEOUTS; do
    id=$((200000 + t))
    out=$(psql -X -qAt \
        -c "SET statement_timeout = '${t}ms'" \
        -c "SELECT 'knn=' || count(*) FROM festival.knn('lbc_ix', 'POINT(50000 50000)', 5)" \
        -c "RESET statement_timeout" \
        -c "SELECT 'window=' || count(*) FROM festival.query('lbc_ix', $window)" \
        -c "SELECT 'inserted=' || festival.insert('lbc_ix', $id, ST_MakePoint(30000 + $t, 30000 + $t))" 2>&1)
    if grep -q 'canceling statement due to statement timeout' <<<"$out"; then
        cancelled=$((cancelled + 1))
        how="cancelled"
    else
        how="not cancelled"
    fi
    truth=$(qv -c "SELECT count(*) FROM lbc_src WHERE ST_Intersects(geom, $window)")
    if grep -q '^inserted=true$' <<<"$out"; then
        q -c "INSERT INTO lbc_src VALUES ($id, ST_MakePoint(30000 + $t, 30000 + $t))" >/dev/null
    fi
    tap_like "$out" "^window=$truth\$" "first statement under a ${t} ms timeout ($how): the window query answers as brute force ($truth)"
done
tap_ok "$([ "$cancelled" -gt 0 ]; echo $?)" "the timeout cancelled the first statement of $cancelled sessions"

out=$(q -c "CREATE TEMP TABLE got AS SELECT id FROM festival.query('lbc_ix', ST_MakeEnvelope(0, 0, 100003, 99991))" \
        -c "SELECT 'missing=' || count(*) FROM (SELECT id FROM lbc_src EXCEPT ALL SELECT id FROM got) m" \
        -c "SELECT 'extra=' || count(*) FROM (SELECT id FROM got EXCEPT ALL SELECT id FROM lbc_src) e" \
        -c "SELECT 'check=' || count(*) FROM festival.check('lbc_ix')")
tap_like "$out" '^missing=0$' "every object of the source table (and every insert acknowledged) is in the index"
tap_like "$out" '^extra=0$' "and nothing else"
tap_like "$out" '^check=0$' "check() is clean"

qv -c "SELECT festival.drop_index('lbc_ix')" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE festival_lb_cancel" >/dev/null 2>&1
tap_done
