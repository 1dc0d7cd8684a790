-- workloads/demo.sql: festival's main job in one script.
--
-- Generates a point data set, builds R-trees with both splits and two page
-- sizes, an STR-packed R-tree, an R*-tree, a Hilbert R-tree and an
-- xBR+-tree on a direct-I/O device that also simulates a SATA SSD (profile
-- ssd_kingston_v300: every run records real and virtual device time), runs
-- 300 window queries on each (100 windows each covering 0.001%, 0.01% and
-- 0.1% of the extent, as in Carniel et al. 2018), runs the same queries
-- through a PostGIS GiST index as the baseline, and prints the comparison from
-- festival.run.
--
-- Run it with scripts/demo, or directly:  psql -v points=20000 -f workloads/demo.sql
-- Variables: points (default 20000), io ('direct' or 'buffered').

\set ON_ERROR_STOP on
\if :{?points}
\else
\set points 20000
\endif
\if :{?io}
\else
\set io direct
\endif

SET client_min_messages = warning;
SET festival.progress_interval = 0;
\o /dev/null
CREATE EXTENSION IF NOT EXISTS festival CASCADE;

-- Clean slate: indices and runs of earlier demo runs in this database.
SELECT festival.drop_index(name) FROM festival.index WHERE name LIKE 'demo\_%';
DELETE FROM festival.run WHERE label LIKE 'demo:%';
SELECT festival.drop_device('demo') FROM festival.device WHERE name = 'demo';
SELECT festival.create_device('demo', 'demo', io => :'io', profile => 'ssd_kingston_v300');

-------------------------------------------------------------------------------
-- Data: points in a 100 km square, half uniform and half in 25 Gaussian
-- clusters (Carniel et al. 2018 uses clustered synthetic data), reproducible.
-------------------------------------------------------------------------------
DROP TABLE IF EXISTS demo_points, demo_windows;
SELECT setseed(0.2024);
CREATE TABLE demo_points (id bigint PRIMARY KEY, geom geometry(Point));
WITH centres AS (
    SELECT c, 10000 + random() * 80000 AS cx, 10000 + random() * 80000 AS cy
    FROM generate_series(0, 24) c
)
INSERT INTO demo_points
SELECT i,
       CASE WHEN i % 2 = 0
            THEN ST_MakePoint(random() * 100000, random() * 100000)
            ELSE ST_MakePoint(
                 -- Box-Muller, standard deviation 2 km around a centre
                 least(100000, greatest(0, cx + 2000 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))),
                 least(100000, greatest(0, cy + 2000 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))))
       END
FROM generate_series(1, :points) i
JOIN centres ON centres.c = i % 25;
ANALYZE demo_points;

-- 300 query windows: squares of 0.001%, 0.01% and 0.1% of the extent's area.
CREATE TABLE demo_windows (n int PRIMARY KEY, area_percent numeric, w geometry);
INSERT INTO demo_windows
SELECT n, pct,
       ST_MakeEnvelope(x, y, x + side, y + side)
FROM (
    SELECT n, pct, side,
           random() * (100000 - side) AS x,
           random() * (100000 - side) AS y
    FROM (
        SELECT n,
               (ARRAY[0.001, 0.01, 0.1])[(n - 1) / 100 + 1] AS pct,
               100000 * sqrt((ARRAY[0.001, 0.01, 0.1])[(n - 1) / 100 + 1] / 100) AS side
        FROM generate_series(1, 300) n
    ) s
) t;

-- Runs the 300 windows through festival and returns the total of answers.
CREATE OR REPLACE FUNCTION pg_temp.festival_windows(idx text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    k bigint;
    total bigint := 0;
BEGIN
    FOR r IN SELECT w FROM demo_windows ORDER BY n LOOP
        SELECT count(*) INTO k FROM festival.query(idx, r.w);
        total := total + k;
    END LOOP;
    RETURN total;
END
$$;

-- The same windows through PostgreSQL with the GiST index.
CREATE OR REPLACE FUNCTION pg_temp.gist_windows() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    k bigint;
    total bigint := 0;
BEGIN
    FOR r IN SELECT w FROM demo_windows ORDER BY n LOOP
        SELECT count(*) INTO k FROM demo_points WHERE ST_Intersects(geom, r.w);
        total := total + k;
    END LOOP;
    RETURN total;
END
$$;

CREATE TEMP TABLE demo_answers (label text, answers bigint);

-------------------------------------------------------------------------------
-- festival: R-tree, linear and quadratic split, 2 KB and 8 KB pages, one
-- insert at a time; an STR-packed R-tree; the R*-tree, the Hilbert R-tree
-- and the xBR+-tree (8 KB pages)
-------------------------------------------------------------------------------
CREATE TEMP TABLE demo_configs (name text, structure text, options jsonb, method text, title text);
INSERT INTO demo_configs VALUES
    ('demo_a_linear_2k', 'rtree', '{"split": "linear", "page_size": 2048}', 'insert', 'R-tree linear, 2 kB'),
    ('demo_b_linear_8k', 'rtree', '{"split": "linear", "page_size": 8192}', 'insert', 'R-tree linear, 8 kB'),
    ('demo_c_quadratic_2k', 'rtree', '{"split": "quadratic", "page_size": 2048}', 'insert', 'R-tree quadratic, 2 kB'),
    ('demo_d_quadratic_8k', 'rtree', '{"split": "quadratic", "page_size": 8192}', 'insert', 'R-tree quadratic, 8 kB'),
    ('demo_e_str_8k', 'rtree', '{"page_size": 8192}', 'str', 'R-tree STR-packed, 8 kB'),
    ('demo_f_rstar_8k', 'rstartree', '{"page_size": 8192}', 'insert', 'R*-tree, 8 kB'),
    ('demo_g_hilbert_8k', 'hilbert', '{"page_size": 8192}', 'insert', 'Hilbert R-tree, 8 kB'),
    ('demo_h_xbr_8k', 'xbrtree', '{"page_size": 8192}', 'insert', 'xBR+-tree, 8 kB');

SELECT festival.create_index(name, structure, 'demo', options, 'demo_points')
FROM demo_configs;

-- one run per build and per query set; psql's \gexec runs each line
SELECT format($f$SELECT festival.begin_run('demo: build %1$s');
SELECT festival.build('%1$s', '%2$s');
SELECT festival.end_run();
SELECT festival.close('%1$s');
SELECT festival.begin_run('demo: queries %1$s');
INSERT INTO demo_answers SELECT 'demo: queries %1$s', pg_temp.festival_windows('%1$s');
SELECT festival.end_run();$f$, name, method)
FROM demo_configs ORDER BY name \gexec

-------------------------------------------------------------------------------
-- Baseline: PostGIS GiST on the same table and windows
-------------------------------------------------------------------------------
SELECT festival.begin_run('demo: build gist');
CREATE INDEX demo_points_gist ON demo_points USING gist (geom);
SELECT festival.end_run();
SELECT festival.begin_run('demo: queries gist');
INSERT INTO demo_answers SELECT 'demo: queries gist', pg_temp.gist_windows();
SELECT festival.end_run();

-------------------------------------------------------------------------------
-- The comparison, from festival.run
-------------------------------------------------------------------------------
\o
\pset footer off
\echo
\echo 'festival demo:' :points 'points,' :io 'I/O, 300 window queries (0.001%, 0.01%, 0.1% of the extent)'
\echo

WITH runs AS (
    SELECT r.*,
           split_part(r.label, ' ', 2) AS phase,
           split_part(r.label, ' ', 3) AS ix
    FROM festival.run r
    WHERE r.label LIKE 'demo:%'
),
gist AS (
    SELECT phase, wall_seconds FROM runs WHERE ix = 'gist'
)
SELECT runs.phase,
       CASE WHEN runs.ix = 'gist' AND runs.phase = 'build' THEN 'PostGIS GiST, CREATE INDEX'
            WHEN runs.ix = 'gist' THEN 'PostGIS GiST (baseline)'
            ELSE c.title
       END AS configuration,
       round(runs.wall_seconds::numeric, 3) AS wall_s,
       round(runs.cpu_seconds::numeric, 3) AS cpu_s,
       round(runs.io_seconds::numeric, 3) AS io_s,
       nullif(round(runs.device_seconds::numeric, 3), 0) AS ssd_s,
       nullif(runs.pages_read, 0) AS pages_read,
       nullif(runs.pages_written, 0) AS pages_written,
       nullif(runs.nodes_visited, 0) AS nodes_visited,
       a.answers,
       round((runs.wall_seconds / nullif(gist.wall_seconds, 0))::numeric, 2) AS "× GiST"
FROM runs
LEFT JOIN gist ON gist.phase = runs.phase
LEFT JOIN demo_answers a ON a.label = runs.label
LEFT JOIN demo_configs c ON c.name = runs.ix
ORDER BY runs.phase, runs.ix = 'gist' DESC, runs.ix;

\echo 'answers must be equal in every query row; "× GiST" is wall time relative to GiST (below 1 is faster).'
\echo 'GiST works in shared buffers and CREATE INDEX sorts its input (a bulk load); the trees above insert'
\echo 'one object at a time (except the STR-packed one) and every node access is a device I/O (io direct'
\echo 'uses O_DIRECT): pages_read and pages_written count them. ssd_s is the virtual time the simulated'
\echo 'SATA SSD (profile ssd_kingston_v300) would need for the same submissions.'
\echo 'scripts/run-workload --config experiments/structures.json compares every structure with GiST, both in memory.'
\echo 'Every figure is in festival.run (metrics and config hold the rest); festival.index lists the indices.'
