#!/usr/bin/env bash
# An ERROR in the middle of an operation (here a build cancelled by
# statement_timeout) leaves the index consistent: the next use reloads it
# from disk, silently, with every row committed before the cancel and a
# sound structure, but refuses queries (it holds part of its source) until
# a new build completes it; the session that follows opens it without a
# warning.
source "$(dirname "$0")/lib/tap.bash"

fresh_database festival_interrupt
tap_plan 12

scattered_points pts 300000
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('interrupt', io => 'buffered');
SELECT festival.create_index('b', 'rtree', 'interrupt', '{"page_size": 2048}', 'pts');
SELECT festival.create_index('s', 'rtree', 'interrupt', '{"page_size": 1024}', 'pts');
SQL

# without ON_ERROR_STOP: the statements after the cancelled one must run;
# a build's batch ends when its pages reach maintenance_work_mem (1 MB: 512
# pages of 2 kB), so batches commit before the cancel
out=$(psql -X -qAt -c "SET festival.progress_interval = 0" -c "SET maintenance_work_mem = '1MB'" \
        -c "SET statement_timeout = '1s'" \
        -c "SELECT festival.build('b')" \
        -c "RESET statement_timeout" \
        -c "SELECT 'entries=' || (festival.stats('b')->>'entries')" \
        -c "SELECT 'structural=' || count(*) FROM festival.check('b') WHERE severity = 'error' AND page IS NOT NULL" \
        -c "SELECT 'count_error=' || count(*) FROM festival.check('b') WHERE message LIKE 'the index holds % entries but source table %'" \
        -c "SELECT 'query=' || count(*) FROM festival.query('b', ST_MakeEnvelope(0, 0, 200000, 200000))" 2>&1)
tap_like "$out" 'canceling statement due to statement timeout' "the build was cancelled part-way"
tap_unlike "$out" 'not closed cleanly' "reloading after the ERROR in the same session does not warn"
entries=$(printf '%s\n' "$out" | sed -n 's/^entries=//p')
tap_ok "$( [ -n "$entries" ] && [ "$entries" -gt 0 ] && [ "$entries" -lt 300000 ]; echo $?)" \
    "the rows committed before the cancel are there ($entries)"
tap_like "$out" 'structural=0' "check() finds no structural error"
tap_like "$out" 'count_error=1' "check() reports that the index holds fewer entries than the source"
tap_like "$out" 'index "b" is incompletely built' "a query is refused: the index holds part of its source"

out=$(q -c "SELECT count(*) FROM festival.query('b', ST_MakePoint(7919, 104729))")
tap_unlike "$out" 'not closed cleanly' "the next session opens it without a warning"

out=$(qv -c "SET festival.progress_interval = 0" -c "SELECT festival.build('b')" \
         -c "SELECT count(*) FROM festival.check('b')")
tap_is "$(printf '%s' "$out" | tr '\n' ' ')" "300000 0" "a new build completes it and check() is clean"

# A bulk load cancelled part-way (while it gathers, sorts or writes nodes)
# leaves the empty tree: loaders commit every node and change the root
# last.  (If this machine loads 300,000 rows in under 0.35 s, the build
# completes and the first two checks test the complete tree instead.)
out=$(psql -X -qAt -c "SET festival.progress_interval = 0" -c "SET statement_timeout = '350ms'" \
        -c "SELECT 'built=' || festival.build('s', 'str')" \
        -c "RESET statement_timeout" \
        -c "SELECT 'entries=' || (festival.stats('s')->>'entries')" \
        -c "SELECT 'errors=' || count(*) FROM festival.check('s') WHERE severity = 'error' AND message NOT LIKE 'the index holds % entries but source table %'" \
        -c "SELECT 'query=' || count(*) FROM festival.query('s', ST_MakeEnvelope(0, 0, 200000, 200000))" 2>&1)
# the cancel may also arrive after the root was set, before build() returns:
# the whole tree is then in place (measured: at 500 ms for a 490 ms load)
if printf '%s' "$out" | grep -qE 'built=300000|entries=300000'; then expect=300000; else expect=0; fi
tap_like "$out" "entries=$expect" "a cancelled bulk load leaves the empty tree or the whole one ($expect entries)"
if [ $expect = 0 ]; then
    tap_like "$out" 'index "s" is incompletely built' "a query is refused: the build did not finish"
else
    tap_like "$out" "query=$expect" "a query sees exactly that"
fi
tap_like "$out" 'errors=0' "check() finds no error besides the count"
out=$(qv -c "SET festival.progress_interval = 0" -c "SELECT festival.build('s', 'str')" \
         -c "SELECT count(*) FROM festival.check('s')")
tap_is "$(printf '%s' "$out" | tr '\n' ' ')" "300000 0" "a new bulk load completes it and check() is clean"

psql -X -q -d postgres -c "DROP DATABASE festival_interrupt" >/dev/null 2>&1
tap_done
