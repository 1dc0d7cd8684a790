#!/usr/bin/env bash
# ALTER EXTENSION festival UPDATE (docs/development.md, "Versions"): a
# database created with the oldest shipped version, holding devices,
# indices of several kinds and runs, is updated step by step to the
# default version.  Afterwards its catalog equals a fresh CREATE EXTENSION's
# object for object (functions with their signatures, results and bodies,
# tables with their columns, defaults, constraints and comments, views,
# built-in device profiles: test/shell/lib/extension_catalog.sql), its
# indices answer as PostGIS's brute force does, check() finds nothing, its
# runs are kept and compared, and new runs and indices work.  An update
# script that forgets an object, or an old version whose install script no
# longer loads against the library, fails here.
source "$(dirname "$0")/lib/tap.bash"

oldest=$(qv -d postgres -c "SELECT min(version COLLATE \"C\") FROM pg_available_extension_versions WHERE name = 'festival'")
newest=$(qv -d postgres -c "SELECT default_version FROM pg_available_extensions WHERE name = 'festival'")
if [ -z "$oldest" ] || [ "$oldest" = "$newest" ]; then
    tap_skip_all "only one festival version is installed ($newest)"
fi
tap_plan 12
catalog_sql="$(dirname "$0")/lib/extension_catalog.sql"
cleanup() {
    for db in upg_old upg_fresh; do
        psql -X -q -d "$db" -c "SELECT festival.drop_index(name) FROM festival.index" >/dev/null 2>&1
        psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
    done
}
trap cleanup EXIT
cleanup

psql -X -q -d postgres -c "CREATE DATABASE upg_old" -c "CREATE DATABASE upg_fresh" >/dev/null
export PGDATABASE=upg_old
out=$(q -c "SET client_min_messages = warning" -c "CREATE EXTENSION postgis" \
        -c "CREATE EXTENSION festival VERSION '$oldest'")
tap_is "$out" "" "festival $oldest installs against today's library"

# What a user of the old version holds: devices, an R-tree written through,
# a FAST R*-tree, a grid file, a run of each.
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SELECT festival.create_device('upg_dev', io => 'buffered');
CREATE TABLE pts AS SELECT i AS id, ST_MakePoint((i * 7919) % 1000, (i * 104729) % 997) AS geom
  FROM generate_series(1, 3000) i;
CREATE UNIQUE INDEX ON pts (id);
SELECT festival.create_index('upg_rt', 'rtree', 'upg_dev', '{"page_size": 1024}', 'pts');
SELECT festival.create_index('upg_fast', 'rstartree', 'upg_dev', '{"page_size": 1024, "framework": "fast"}', 'pts');
SELECT festival.create_index('upg_gf', 'gridfile', 'upg_dev', '{"page_size": 1024}', 'pts');
SELECT festival.begin_run('before rt');
SELECT festival.build('upg_rt');
SELECT festival.end_run();
SELECT festival.begin_run('before fast');
SELECT festival.build('upg_fast');
SELECT festival.end_run();
SELECT festival.build('upg_gf');
SELECT festival.close(name) FROM festival.index;
SQL
runs_before=$(qv -c "SELECT string_agg(run_id || ':' || label || ':' || pages_written, ',' ORDER BY run_id) FROM festival.run")

out=$(q -c "ALTER EXTENSION festival UPDATE")
tap_is "$out" "" "ALTER EXTENSION festival UPDATE runs from $oldest"
tap_is "$(qv -c "SELECT extversion FROM pg_extension WHERE extname = 'festival'")" "$newest" \
    "the database is at the default version $newest"

PGDATABASE=upg_fresh q -c "SET client_min_messages = warning" -c "CREATE EXTENSION festival CASCADE" >/dev/null
updated=$(qv -f "$catalog_sql")
fresh=$(PGDATABASE=upg_fresh qv -f "$catalog_sql")
difference=$(diff <(echo "$fresh") <(echo "$updated"))
tap_ok $([ -n "$fresh" ] && [ -z "$difference" ]; echo $?) \
    "the updated catalog equals a fresh $newest catalog ($(echo "$fresh" | wc -l) objects)"
[ -n "$difference" ] && echo "$difference" | head -40 | sed 's/^/# /'

tap_is "$(qv -c "SELECT string_agg(run_id || ':' || label || ':' || pages_written, ',' ORDER BY run_id) FROM festival.run")" \
    "$runs_before" "the runs made before the update are kept"
for ix in upg_rt upg_fast upg_gf; do
    got=$(qv -c "SET client_min_messages = warning" -c "SELECT count(*) FROM festival.query('$ix', ST_MakeEnvelope(100, 100, 400, 300))")
    want=$(qv -c "SELECT count(*) FROM pts WHERE geom && ST_MakeEnvelope(100, 100, 400, 300)")
    tap_is "$got" "$want" "$ix, made before the update, answers as PostGIS does"
done
tap_is "$(qv -c "SET client_min_messages = warning" -c "SELECT count(*) FROM festival.check('upg_fast')")" "0" \
    "check() of an index made before the update finds nothing"
tap_is "$(qv -c "SELECT count(*) FROM festival.compare('before rt', 'before fast') WHERE metric = 'pages_written'")" "1" \
    "compare() reads the runs made before the update"
out=$(q -c "SET client_min_messages = warning" -c "SET festival.progress_interval = 0" \
        -c "SELECT festival.begin_run('after')" \
        -c "SELECT festival.insert('upg_rt', 5000, ST_MakePoint(1, 1))" -c "SELECT festival.end_run()" \
        -c "SELECT count(*) FROM festival.query('upg_rt', ST_MakeEnvelope(0, 0, 2, 2))" 2>&1 | tail -1)
tap_is "$out" "$(qv -c "SELECT count(*) + 1 FROM pts WHERE geom && ST_MakeEnvelope(0, 0, 2, 2)")" \
    "an index made before the update takes an insert in a new run"
out=$(q -c "SET client_min_messages = warning" -c "SET festival.progress_interval = 0" \
        -c "SELECT festival.create_index('upg_new', 'lbgrid', 'upg_dev', '{\"page_size\": 1024}', 'pts')" \
        -c "SELECT festival.build('upg_new')" \
        -c "SELECT count(*) FROM festival.query('upg_new', ST_MakeEnvelope(100, 100, 400, 300))" 2>&1 | tail -1)
tap_is "$out" "$(qv -c "SELECT count(*) FROM pts WHERE geom && ST_MakeEnvelope(100, 100, 400, 300)")" \
    "a new index made after the update answers as PostGIS does"
