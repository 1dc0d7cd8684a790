-- workloads/bench_flash.sql: write-through against FAST against eFIND.
--
-- As in Carniel et al. 2018 (section 4) and the eFIND paper: R-trees (quadratic
-- split) over point data sets, 4 kB pages, a 512 kB buffer, flushing units
-- of 5 pages, the frameworks' best policies (FAST*, eFIND MH with a 20%
-- S2Q read buffer and temporal control), built one insert at a time on a
-- direct-I/O device, then the 300 windows (100 each of 0.001%, 0.01% and
-- 0.1% of the extent).  Data sets: :points uniform points in [0,1]^2, and
-- the same number in 125 Gaussian clusters (Carniel et al. 2018: 125 clusters
-- of 8,000 points for 1,000,000; here proportionally fewer).
--
-- A build ends with a flush of the whole buffer, so every configuration
-- leaves a complete, durable index.  The log is synced as
-- festival.log_sync says (default: every modification; FESTIval never
-- synced its log).
--
-- Run with scripts/bench-flash, or psql -v points=100000 -f workloads/bench_flash.sql

\set ON_ERROR_STOP on
\if :{?points}
\else
\set points 100000
\endif
\if :{?io}
\else
\set io direct
\endif

SET client_min_messages = warning;
SET festival.progress_interval = 0;
\o /dev/null
CREATE EXTENSION IF NOT EXISTS festival CASCADE;
-- every index on the benchmark's own device goes (earlier runs, manual trials)
SELECT festival.drop_index(name) FROM festival.index WHERE device = 'bench_flash';
DELETE FROM festival.run WHERE label LIKE 'flash:%';
SELECT festival.drop_device('bench_flash') FROM festival.device WHERE name = 'bench_flash';
SELECT festival.create_device('bench_flash', 'bench_flash', io => :'io');

DROP TABLE IF EXISTS bf_uniform, bf_clusters, bf_windows;
SELECT setseed(0.125);
CREATE TABLE bf_uniform (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO bf_uniform SELECT i, ST_MakePoint(random(), random()) FROM generate_series(1, :points) i;

CREATE TABLE bf_clusters (id bigint PRIMARY KEY, geom geometry(Point));
WITH centres AS (SELECT c, random() AS cx, random() AS cy FROM generate_series(0, 124) c)
INSERT INTO bf_clusters
SELECT i,
       ST_MakePoint(least(1, greatest(0, cx + 0.01 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))),
                    least(1, greatest(0, cy + 0.01 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))))
FROM generate_series(1, :points) i JOIN centres ON centres.c = i % 125;
ANALYZE bf_uniform;
ANALYZE bf_clusters;

CREATE TABLE bf_windows (n int PRIMARY KEY, w geometry);
INSERT INTO bf_windows
SELECT n, ST_MakeEnvelope(x, y, x + side, y + side)
FROM (SELECT n, side, random() * (1 - side) AS x, random() * (1 - side) AS y
      FROM (SELECT n, sqrt((ARRAY[0.001, 0.01, 0.1])[(n - 1) / 100 + 1] / 100) AS side
            FROM generate_series(1, 300) n) s) t;

CREATE OR REPLACE FUNCTION pg_temp.windows(idx text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; k bigint; total bigint := 0;
BEGIN
    FOR r IN SELECT w FROM bf_windows ORDER BY n LOOP
        SELECT count(*) INTO k FROM festival.query(idx, r.w);
        total := total + k;
    END LOOP;
    RETURN total;
END $$;
CREATE TEMP TABLE bf_answers (label text, answers bigint);

CREATE TEMP TABLE bf_configs AS
SELECT format('bf_%s_%s', ds, fw) AS name, ds, fw,
       jsonb_build_object('framework', fw, 'page_size', 4096, 'split', 'quadratic')
       || CASE WHEN fw = 'none' THEN '{}'::jsonb
               ELSE '{"buffer_size": 524288, "flushing_unit": 5}'::jsonb END AS options
FROM unnest(ARRAY['uniform', 'clusters']) ds, unnest(ARRAY['none', 'fast', 'efind']) fw;

SELECT festival.create_index(name, 'rtree', 'bench_flash', options, ('bf_' || ds)::regclass)
FROM bf_configs;

SELECT format($f$SELECT festival.begin_run('flash: %1$s build');
SELECT festival.build('%1$s');
SELECT festival.end_run();
SELECT festival.close('%1$s');
SELECT festival.begin_run('flash: %1$s queries');
INSERT INTO bf_answers SELECT 'flash: %1$s queries', pg_temp.windows('%1$s');
SELECT festival.end_run();
SELECT festival.close('%1$s');$f$, name)
FROM bf_configs ORDER BY ds DESC, array_position(ARRAY['none', 'fast', 'efind'], fw) \gexec
\o

\pset footer off
\echo
\echo 'festival flash frameworks:' :points 'points per data set,' :io 'I/O, 4 kB pages, 512 kB buffer, unit 5'
WITH r AS (
    SELECT split_part(label, ' ', 3) AS phase,
           c.ds, c.fw, run.*
    FROM festival.run run
    JOIN bf_configs c ON c.name = split_part(run.label, ' ', 2)
    WHERE run.label LIKE 'flash:%'
)
SELECT r.ds AS data, r.phase, r.fw AS framework,
       round(r.wall_seconds::numeric, 2) AS wall_s,
       round(r.io_seconds::numeric, 2) AS device_s,
       r.pages_written, r.pages_read,
       (r.metrics ->> 'flushes')::bigint AS flushes,
       (r.metrics ->> 'log_syncs')::bigint AS log_syncs,
       a.answers
FROM r LEFT JOIN bf_answers a ON a.label = r.label
ORDER BY r.ds DESC, r.phase, array_position(ARRAY['none', 'fast', 'efind'], r.fw);

\echo 'Gains as the seeds define them: how much the second configuration reduced the first''s value.'
WITH r AS (
    SELECT split_part(label, ' ', 3) AS phase, c.ds, c.fw, run.*
    FROM festival.run run
    JOIN bf_configs c ON c.name = split_part(run.label, ' ', 2)
    WHERE run.label LIKE 'flash:%'
),
pairs AS (
    SELECT a.ds, a.phase, a.fw || ' over ' || b.fw AS comparison,
           a.wall_seconds AS a_wall, b.wall_seconds AS b_wall,
           a.pages_written AS a_written, b.pages_written AS b_written,
           a.io_seconds AS a_io, b.io_seconds AS b_io
    FROM r a JOIN r b ON a.ds = b.ds AND a.phase = b.phase
    WHERE (a.fw, b.fw) IN (('efind', 'fast'), ('fast', 'none'), ('efind', 'none'))
)
SELECT ds AS data, phase, comparison,
       round((100 * (b_wall - a_wall) / nullif(b_wall, 0))::numeric, 1) AS "wall gain %",
       round((100 * (b_io - a_io) / nullif(b_io, 0))::numeric, 1) AS "device-time gain %",
       round((100.0 * (b_written - a_written) / nullif(b_written, 0))::numeric, 1) AS "pages-written gain %"
FROM pairs
ORDER BY ds DESC, phase, comparison;
