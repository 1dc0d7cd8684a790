-- workloads/bench_structures.sql: every structure and split of festival
-- against PostGIS GiST, same session, same data, both sides in memory.
--
-- For each configuration of bench_config (structure, options, build
-- method) on :points uniform points:
--   build    festival.build(index, method), one insert at a time or bulk
--            loaded; GiST's baselines are INSERT into a GiST-indexed table
--            (one index insertion per row) and CREATE INDEX (sorted load);
--   windows  the 300 windows of Carniel et al. 2018 (100 each of 0.001%, 0.01%,
--            0.1% of the extent) through festival.query, against GiST;
--   knn      300 points, k = 10, through festival.knn, against GiST's
--            ORDER BY geom <-> p LIMIT 10.
-- Each timed :reps times; medians.  Answers are summed and must agree
-- with GiST's.
--
-- Run with scripts/bench-structures, or
--   psql -v points=100000 -v reps=3 -f workloads/bench_structures.sql

\set ON_ERROR_STOP on
\if :{?points}
\else
\set points 100000
\endif
\if :{?reps}
\else
\set reps 3
\endif
\if :{?only}
\else
\set only '%'
\endif

SET client_min_messages = warning;
SET festival.progress_interval = 0;
\o /dev/null
CREATE EXTENSION IF NOT EXISTS festival CASCADE;
SELECT festival.drop_index(name) FROM festival.index WHERE name LIKE 'bs\_%';
DELETE FROM festival.run WHERE label LIKE 'bs:%';
SELECT festival.drop_device('bench_structures') FROM festival.device WHERE name = 'bench_structures';
SELECT festival.create_device('bench_structures', 'bench_structures', io => 'buffered');

DROP TABLE IF EXISTS bs_points, bs_windows, bs_knn, bs_gist_rows, bs_heap_rows, bs_config, bs_answers;
SELECT setseed(0.25);
CREATE TABLE bs_points (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO bs_points
SELECT i, ST_MakePoint(random() * 1000000, random() * 1000000) FROM generate_series(1, :points) i;
ANALYZE bs_points;

CREATE TABLE bs_windows (n int PRIMARY KEY, w geometry);
INSERT INTO bs_windows
SELECT n, ST_MakeEnvelope(x, y, x + side, y + side)
FROM (SELECT n, side, random() * (1000000 - side) AS x, random() * (1000000 - side) AS y
      FROM (SELECT n, 1000000 * sqrt((ARRAY[0.001, 0.01, 0.1])[(n - 1) / 100 + 1] / 100) AS side
            FROM generate_series(1, 300) n) s) t;
CREATE TABLE bs_knn (n int PRIMARY KEY, p geometry);
INSERT INTO bs_knn SELECT n, ST_MakePoint(random() * 1000000, random() * 1000000) FROM generate_series(1, 300) n;

CREATE TABLE bs_gist_rows (id bigint, geom geometry(Point));
CREATE INDEX ON bs_gist_rows USING gist (geom);
CREATE TABLE bs_heap_rows (id bigint, geom geometry(Point));
CREATE TABLE bs_answers (config text, what text, answers numeric);

-- the configurations: every split (exponential needs small nodes), the
-- R*-tree, the Hilbert R-tree, the xBR+-tree, one at a time and bulk loaded,
-- and the grid files (GFFM, LB-Grid)
CREATE TABLE bs_config (ord int PRIMARY KEY, name text UNIQUE, structure text, method text, options jsonb);
INSERT INTO bs_config VALUES
    ( 1, 'bs_rtree_linear', 'rtree', 'insert', '{"split": "linear"}'),
    ( 2, 'bs_rtree_quadratic', 'rtree', 'insert', '{"split": "quadratic"}'),
    ( 3, 'bs_rtree_greene', 'rtree', 'insert', '{"split": "greene"}'),
    ( 4, 'bs_rtree_angtan', 'rtree', 'insert', '{"split": "angtan"}'),
    ( 5, 'bs_rtree_rstar', 'rtree', 'insert', '{"split": "rstar"}'),
    ( 6, 'bs_rtree_exponential_1k', 'rtree', 'insert', '{"split": "exponential", "page_size": 1024, "max_fill": 75}'),
    ( 7, 'bs_rtree_quadratic_1k', 'rtree', 'insert', '{"split": "quadratic", "page_size": 1024, "max_fill": 75}'),
    ( 8, 'bs_rstartree', 'rstartree', 'insert', '{}'),
    ( 9, 'bs_hilbert', 'hilbert', 'insert', '{}'),
    (10, 'bs_xbrtree', 'xbrtree', 'insert', '{}'),
    (11, 'bs_rtree_str', 'rtree', 'str', '{}'),
    (12, 'bs_rtree_hilbert', 'rtree', 'hilbert', '{}'),
    (13, 'bs_rstartree_str', 'rstartree', 'str', '{}'),
    (14, 'bs_hilbert_packed', 'hilbert', 'hilbert', '{}'),
    (15, 'bs_xbrtree_bulk', 'xbrtree', 'bulk', '{}'),
    (16, 'bs_gridfile', 'gridfile', 'insert', '{}'),
    (17, 'bs_lbgrid', 'lbgrid', 'insert', '{}');
DELETE FROM bs_config WHERE name NOT LIKE :'only';
SELECT festival.create_index(name, structure, 'bench_structures', options, 'bs_points') FROM bs_config ORDER BY ord;

CREATE FUNCTION pg_temp.festival_windows(idx text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; k bigint; total bigint := 0;
BEGIN
    FOR r IN SELECT w FROM bs_windows ORDER BY n LOOP
        SELECT count(*) INTO k FROM festival.query(idx, r.w);
        total := total + k;
    END LOOP;
    RETURN total;
END $$;
CREATE FUNCTION pg_temp.gist_windows() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; k bigint; total bigint := 0;
BEGIN
    FOR r IN SELECT w FROM bs_windows ORDER BY n LOOP
        SELECT count(*) INTO k FROM bs_points WHERE ST_Intersects(geom, r.w);
        total := total + k;
    END LOOP;
    RETURN total;
END $$;
-- kNN answers are summed as distances (ties make ids ambiguous)
CREATE FUNCTION pg_temp.festival_knn(idx text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE r record; d float8; total float8 := 0;
BEGIN
    FOR r IN SELECT p FROM bs_knn ORDER BY n LOOP
        SELECT sum(distance) INTO d FROM festival.knn(idx, r.p, 10);
        total := total + d;
    END LOOP;
    RETURN round(total::numeric, 3);
END $$;
CREATE FUNCTION pg_temp.gist_knn() RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE r record; d float8; total float8 := 0;
BEGIN
    FOR r IN SELECT p FROM bs_knn ORDER BY n LOOP
        SELECT sum(ST_Distance(geom, r.p)) INTO d
        FROM (SELECT geom FROM bs_points ORDER BY geom <-> r.p LIMIT 10) s;
        total := total + d;
    END LOOP;
    RETURN round(total::numeric, 3);
END $$;

-- GiST baselines
SELECT format($f$
TRUNCATE bs_gist_rows;
SELECT festival.begin_run('bs: gist | insert');
INSERT INTO bs_gist_rows SELECT id, geom FROM bs_points;
SELECT festival.end_run();
TRUNCATE bs_heap_rows;
SELECT festival.begin_run('bs: heap | insert');
INSERT INTO bs_heap_rows SELECT id, geom FROM bs_points;
SELECT festival.end_run();
DROP INDEX IF EXISTS bs_points_gist;
SELECT festival.begin_run('bs: gist | create index');
CREATE INDEX bs_points_gist ON bs_points USING gist (geom);
SELECT festival.end_run();
$f$) FROM generate_series(1, :reps) \gexec
SELECT pg_temp.gist_windows(), pg_temp.gist_knn();	-- warm-up
SELECT format($f$
SELECT festival.begin_run('bs: gist | windows');
INSERT INTO bs_answers SELECT 'gist', 'windows', pg_temp.gist_windows();
SELECT festival.end_run();
SELECT festival.begin_run('bs: gist | knn');
INSERT INTO bs_answers SELECT 'gist', 'knn', pg_temp.gist_knn();
SELECT festival.end_run();
$f$) FROM generate_series(1, :reps) \gexec

-- festival: builds repeated, then the queries on the last build, warm
SELECT format($f$
SELECT festival.begin_run('bs: %1$s | build');
SELECT festival.build(%1$L, %2$L);
SELECT festival.end_run();
$f$, name, method) FROM bs_config, generate_series(1, :reps) ORDER BY ord \gexec
SELECT pg_temp.festival_windows(name), pg_temp.festival_knn(name) FROM bs_config;	-- warm-up
SELECT format($f$
SELECT festival.begin_run('bs: %1$s | windows');
INSERT INTO bs_answers SELECT %1$L, 'windows', pg_temp.festival_windows(%1$L);
SELECT festival.end_run();
SELECT festival.begin_run('bs: %1$s | knn');
INSERT INTO bs_answers SELECT %1$L, 'knn', pg_temp.festival_knn(%1$L);
SELECT festival.end_run();
$f$, name) FROM bs_config, generate_series(1, :reps) ORDER BY ord \gexec
\o

\pset footer off
\echo
\echo 'festival structures vs PostGIS GiST:' :points 'uniform points, both in memory, medians of' :reps 'runs'
WITH m AS (
    SELECT split_part(split_part(label, ': ', 2), ' | ', 1) AS config,
           split_part(label, ' | ', 2) AS what,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_seconds) AS wall
    FROM festival.run WHERE label LIKE 'bs:%' GROUP BY 1, 2
), g AS (
    SELECT max(wall) FILTER (WHERE config = 'gist' AND what = 'insert') AS gist_insert,
           max(wall) FILTER (WHERE config = 'heap' AND what = 'insert') AS heap_insert,
           max(wall) FILTER (WHERE config = 'gist' AND what = 'create index') AS gist_create,
           max(wall) FILTER (WHERE config = 'gist' AND what = 'windows') AS gist_windows,
           max(wall) FILTER (WHERE config = 'gist' AND what = 'knn') AS gist_knn
    FROM m
)
SELECT c.name AS configuration, c.method,
       round(b.wall::numeric, 3) AS build_s,
       round((b.wall / CASE WHEN c.method = 'insert' THEN g.gist_insert ELSE g.gist_create END)::numeric, 2)
           AS build_vs_gist,
       round(w.wall::numeric, 3) AS windows_s,
       round((w.wall / g.gist_windows)::numeric, 2) AS windows_vs_gist,
       round(k.wall::numeric, 3) AS knn_s,
       round((k.wall / g.gist_knn)::numeric, 2) AS knn_vs_gist,
       (festival.stats(c.name)->>'height')::int AS height,
       (festival.stats(c.name)->>'pages')::bigint AS pages
FROM bs_config c CROSS JOIN g
JOIN m b ON b.config = c.name AND b.what = 'build'
JOIN m w ON w.config = c.name AND w.what = 'windows'
JOIN m k ON k.config = c.name AND k.what = 'knn'
ORDER BY c.ord;

\echo 'baselines: build compares one-at-a-time builds with INSERT into a GiST-indexed table'
\echo 'and bulk loads with CREATE INDEX USING gist; targets: STR windows <= 1.00, knn <= 2.00'
SELECT split_part(split_part(label, ': ', 2), ' | ', 1) || ' ' || split_part(label, ' | ', 2) AS baseline,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_seconds)::numeric, 3) AS wall_s
FROM festival.run WHERE label LIKE 'bs: gist%' OR label LIKE 'bs: heap%' GROUP BY 1 ORDER BY 1;

SELECT CASE WHEN count(*) FILTER (WHERE a.answers <> g.answers) = 0 THEN 'answers agree with GiST'
            ELSE 'ANSWERS DIFFER: ' || string_agg(a.config || ' ' || a.what, ', ') FILTER (WHERE a.answers <> g.answers)
       END AS check
FROM bs_answers a JOIN (SELECT DISTINCT what, answers FROM bs_answers WHERE config = 'gist') g USING (what)
WHERE a.config <> 'gist';
