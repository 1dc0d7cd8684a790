#!/usr/bin/env bash
# Source queries are planned with jit = off (sql/source.c, source_jit_off;
# DESIGN.md §2): with JIT on at its default thresholds, a plain SELECT of the
# build's source query is JIT-compiled (the control: it shows the test can
# fail), while build(), query() refinement and knn() distance fetches
# compile nothing, and the session's own jit setting is
# unchanged afterwards.  llvmjit reports each compile at DEBUG1 ("time to
# inline ..."), which is what is counted here.
source "$(dirname "$0")/lib/tap.bash"

fresh_database festival_source_jit
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('jit', io => 'buffered');
CREATE TABLE pts AS
    SELECT i AS id, ST_MakePoint(i % 1000, i / 1000) AS geom FROM generate_series(1, 20000) i;
SELECT festival.create_index('j', 'rtree', 'jit', '{}', 'pts');
-- lines, so that query() and knn() fetch source rows (refinement, distances)
CREATE TABLE lines AS
    SELECT i AS id, ST_MakeLine(ST_MakePoint(i % 100, i / 100), ST_MakePoint(i % 100 + 3, i / 100 + 1)) AS geom
    FROM generate_series(1, 2000) i;
CREATE UNIQUE INDEX ON lines (id);
SELECT festival.create_index('l', 'rtree', 'jit', '{}', 'lines');
SELECT festival.build('l');
SQL

jit_session() {   # psql with JIT on at its default thresholds, DEBUG1 to the client
    psql -X -qAt -c "SET jit = on" -c "SET jit_above_cost = 100000" \
         -c "SET jit_inline_above_cost = 500000" -c "SET client_min_messages = debug1" "$@" 2>&1
}
control=$(jit_session -c "SELECT max(id::int8), max(length(public.st_asewkb(CASE WHEN public.st_hasarc(geom)
                          THEN public.st_curvetoline(geom) ELSE geom END))) FROM pts WHERE geom IS NOT NULL")
if ! grep -q "time to inline" <<<"$control"; then
    tap_skip_all "this server does not JIT-compile (no llvmjit provider)"
fi
tap_plan 7
tap_ok 0 "the control: the build's source query on its own is JIT-compiled"

out=$(jit_session -c "SET festival.progress_interval = 0" -c "SELECT 'rows=' || festival.build('j')" -c "SHOW jit")
tap_like "$out" "rows=20000" "build() ran"
tap_unlike "$out" "time to inline" "build() compiled nothing"
tap_is "$(printf '%s\n' "$out" | tail -1)" "on" "the session's jit is on again after build()"

# refinement and distance fetches cost little: after a first query has
# opened the index (catalog reads, with JIT off), JIT is forced on for every
# plan (jit_above_cost = 0); each top-level statement is then compiled once
# (two), and nothing more may be
tri="ST_GeomFromText('POLYGON((0 0, 60 0, 0 12, 0 0))')"
out=$(psql -X -qAt -c "SELECT count(*) FROM festival.query('l', ST_MakePoint(1, 0))" \
          -c "SET jit = on" -c "SET jit_above_cost = 0" -c "SET client_min_messages = debug1" \
          -c "SELECT 'hits=' || count(*) FROM festival.query('l', $tri, 'intersects')" \
          -c "SELECT 'knn=' || count(*) FROM festival.knn('l', ST_MakePoint(50, 10), 100)" 2>&1)
want=$(qv -c "SELECT count(*) FROM lines WHERE ST_Intersects(geom, $tri)")
tap_like "$out" "^hits=$want$" "query() ran and refined ($want rows, as PostGIS)"
tap_like "$out" "^knn=100$" "knn() ran"
tap_is "$(grep -c "time to inline" <<<"$out")" "2" "only the two top-level statements were compiled, even with jit_above_cost = 0"
tap_done
