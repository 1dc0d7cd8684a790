-- workloads/bench_gist.sql: festival's R-tree against PostGIS GiST, same session.
--
-- Both sides read from memory: festival's device uses buffered I/O (the OS
-- page cache), GiST lives in shared buffers.  Measured, each :reps times
-- (median reported):
--   build    festival.build() of an R-tree (one insert at a time, the
--            structure's own algorithm) against
--            (a) INSERT of the same rows into a table with a GiST index,
--                one index insertion per row, and
--            (b) CREATE INDEX ... USING gist, which sorts the input (a bulk
--                load; festival's bulk loading comes later);
--   queries  the 300 windows of Carniel et al. 2018 (100 each of 0.001%,
--            0.01%, 0.1% of the extent), warm, through festival.query and through GiST.
-- The answers of both sides are summed and must be equal.
--
-- Run with scripts/bench-gist, or: psql -v points=200000 -v reps=3 -f workloads/bench_gist.sql

\set ON_ERROR_STOP on
\if :{?points}
\else
\set points 200000
\endif
\if :{?reps}
\else
\set reps 3
\endif
\if :{?options}
\else
\set options '{}'
\endif

SET client_min_messages = warning;
SET festival.progress_interval = 0;
\o /dev/null
CREATE EXTENSION IF NOT EXISTS festival CASCADE;
SELECT festival.drop_index(name) FROM festival.index WHERE name = 'bench_rtree';
DELETE FROM festival.run WHERE label LIKE 'bench:%';
SELECT festival.drop_device('bench') FROM festival.device WHERE name = 'bench';
SELECT festival.create_device('bench', 'bench', io => 'buffered');

DROP TABLE IF EXISTS bench_points, bench_windows, bench_gist_rows, bench_heap_rows;
SELECT setseed(0.5);
CREATE TABLE bench_points (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO bench_points
SELECT i, ST_MakePoint(random() * 1000000, random() * 1000000)
FROM generate_series(1, :points) i;
ANALYZE bench_points;

CREATE TABLE bench_windows (n int PRIMARY KEY, w geometry);
INSERT INTO bench_windows
SELECT n, ST_MakeEnvelope(x, y, x + side, y + side)
FROM (SELECT n, side, random() * (1000000 - side) AS x, random() * (1000000 - side) AS y
      FROM (SELECT n, 1000000 * sqrt((ARRAY[0.001, 0.01, 0.1])[(n - 1) / 100 + 1] / 100) AS side
            FROM generate_series(1, 300) n) s) t;

CREATE TABLE bench_gist_rows (id bigint, geom geometry(Point));
CREATE INDEX bench_gist_rows_geom ON bench_gist_rows USING gist (geom);
CREATE TABLE bench_heap_rows (id bigint, geom geometry(Point));

SELECT festival.create_index('bench_rtree', 'rtree', 'bench', :'options'::jsonb, 'bench_points');

CREATE OR REPLACE FUNCTION pg_temp.festival_windows() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; k bigint; total bigint := 0;
BEGIN
    FOR r IN SELECT w FROM bench_windows ORDER BY n LOOP
        SELECT count(*) INTO k FROM festival.query('bench_rtree', r.w);
        total := total + k;
    END LOOP;
    RETURN total;
END $$;

CREATE OR REPLACE FUNCTION pg_temp.gist_windows() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; k bigint; total bigint := 0;
BEGIN
    FOR r IN SELECT w FROM bench_windows ORDER BY n LOOP
        SELECT count(*) INTO k FROM bench_points WHERE ST_Intersects(geom, r.w);
        total := total + k;
    END LOOP;
    RETURN total;
END $$;

CREATE TEMP TABLE bench_answers (side text, answers bigint);

-- the GiST index for the query phase, then one warm-up pass each
CREATE INDEX bench_points_gist ON bench_points USING gist (geom);
SELECT festival.build('bench_rtree');
SELECT pg_temp.festival_windows(), pg_temp.gist_windows();

SELECT format($f$
SELECT festival.begin_run('bench: festival build');
SELECT festival.build('bench_rtree');
SELECT festival.end_run();
TRUNCATE bench_gist_rows;
SELECT festival.begin_run('bench: gist insert');
INSERT INTO bench_gist_rows SELECT id, geom FROM bench_points;
SELECT festival.end_run();
TRUNCATE bench_heap_rows;
SELECT festival.begin_run('bench: heap insert');
INSERT INTO bench_heap_rows SELECT id, geom FROM bench_points;
SELECT festival.end_run();
DROP INDEX bench_points_gist;
SELECT festival.begin_run('bench: gist create index');
CREATE INDEX bench_points_gist ON bench_points USING gist (geom);
SELECT festival.end_run();
SELECT festival.begin_run('bench: festival queries');
INSERT INTO bench_answers SELECT 'festival', pg_temp.festival_windows();
SELECT festival.end_run();
SELECT festival.begin_run('bench: gist queries');
INSERT INTO bench_answers SELECT 'gist', pg_temp.gist_windows();
SELECT festival.end_run();
$f$) FROM generate_series(1, :reps) \gexec
\o

\pset footer off
\echo
\echo 'festival vs PostGIS GiST:' :points 'points, both in memory, median of' :reps 'repetitions'
WITH m AS (
    SELECT split_part(label, ': ', 2) AS what,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_seconds) AS wall,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_seconds) AS cpu,
           count(*) AS n
    FROM festival.run WHERE label LIKE 'bench:%' GROUP BY 1
)
SELECT what, round(wall::numeric, 3) AS wall_s, round(cpu::numeric, 3) AS cpu_s, n AS reps
FROM m ORDER BY what;

WITH m AS (
    SELECT split_part(label, ': ', 2) AS what,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_seconds) AS wall
    FROM festival.run WHERE label LIKE 'bench:%' GROUP BY 1
), v AS (SELECT jsonb_object_agg(what, wall) AS t FROM m)
SELECT 'build: festival / GiST one insert per row' AS ratio,
       round(((t->>'festival build')::float8 / (t->>'gist insert')::float8)::numeric, 2) AS value,
       '3.00' AS target
FROM v
UNION ALL
SELECT 'build: festival / GiST index insertions only (insert minus heap insert)',
       round(((t->>'festival build')::float8 /
              greatest((t->>'gist insert')::float8 - (t->>'heap insert')::float8, 1e-9))::numeric, 2), ''
FROM v
UNION ALL
SELECT 'build: festival / GiST CREATE INDEX (sorted bulk load)',
       round(((t->>'festival build')::float8 / (t->>'gist create index')::float8)::numeric, 2), ''
FROM v
UNION ALL
SELECT 'queries: festival / GiST (300 windows)',
       round(((t->>'festival queries')::float8 / (t->>'gist queries')::float8)::numeric, 2), '2.00'
FROM v;

SELECT side, min(answers) AS answers, count(DISTINCT answers) = 1 AS stable
FROM bench_answers GROUP BY side ORDER BY side;
SELECT CASE WHEN count(DISTINCT answers) = 1 THEN 'answers agree' ELSE 'ANSWERS DIFFER' END AS check
FROM bench_answers;
