-- workloads/bench_engines.sql: the sync, libaio and io_uring engines.
--
-- The same flush-heavy work on one direct-I/O device per engine: R-trees
-- (quadratic split, 4 kB pages) over :points uniform points, built one
-- insert at a time under FAST (FAST* policy) and eFIND (MH, 20% S2Q read
-- buffer), 256 kB write buffers and flushing units of :unit pages, then
-- the 300 windows of bench_flash (0.001%, 0.01%, 0.1%) as one
-- festival.query_batch.  Prints, per engine and framework, pages and
-- submissions (read and write), the wall time of the build and of the
-- batch query, and the device time of writes and reads (write_seconds,
-- read_seconds: time spent in the engine).  Pages must be equal across
-- engines; only submissions and times may differ.
--
-- Run with scripts/bench-engines, or
--   psql -v points=50000 -v unit=16 -f workloads/bench_engines.sql

\set ON_ERROR_STOP on
\if :{?points}
\else
\set points 50000
\endif
\if :{?unit}
\else
\set unit 16
\endif

SET client_min_messages = warning;
SET festival.progress_interval = 0;
\o /dev/null
CREATE EXTENSION IF NOT EXISTS festival CASCADE;
SELECT festival.drop_index(name) FROM festival.index WHERE device LIKE 'bench_engine_%';
SELECT festival.drop_device(name) FROM festival.device WHERE name LIKE 'bench_engine_%';

DROP TABLE IF EXISTS be_points, be_windows, be_result, be_config;
SELECT setseed(0.125);
CREATE TABLE be_points (id bigint PRIMARY KEY, geom geometry(Point));
INSERT INTO be_points SELECT i, ST_MakePoint(random(), random()) FROM generate_series(1, :points) i;
CREATE TABLE be_windows (n int PRIMARY KEY, w geometry);
INSERT INTO be_windows
SELECT n, ST_MakeEnvelope(x, y, x + side, y + side)
FROM (SELECT n, side, random() * (1 - side) AS x, random() * (1 - side) AS y
      FROM (SELECT n, sqrt((ARRAY[0.001, 0.01, 0.1])[(n - 1) / 100 + 1] / 100) AS side
            FROM generate_series(1, 300) n) s) t;

CREATE TABLE be_config (engine text, framework text, options jsonb);
INSERT INTO be_config
SELECT e, f.framework, f.options || jsonb_build_object('flushing_unit', :unit)
FROM unnest(ARRAY['sync', 'libaio', 'io_uring']) e,
     (VALUES ('fast', '{"framework": "fast", "split": "quadratic", "page_size": 4096,
                        "buffer_size": 262144, "flushing_policy": "fast_star"}'::jsonb),
             ('efind', '{"framework": "efind", "split": "quadratic", "page_size": 4096,
                         "buffer_size": 262144, "flushing_policy": "mh",
                         "read_buffer_policy": "s2q", "read_buffer_percent": 20,
                         "temporal_control": "both"}'::jsonb)) f(framework, options);
SELECT festival.create_device('bench_engine_' || e, 'bench_engine_' || e, io => 'direct', engine => e)
FROM unnest(ARRAY['sync', 'libaio', 'io_uring']) e;

CREATE TABLE be_result (engine text, framework text, phase text, seconds float8, totals jsonb);
CREATE FUNCTION pg_temp.be_run(e text, f text, opts jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	ix text := 'be_' || e || '_' || f;
	t0 timestamptz;
	before jsonb;
BEGIN
	PERFORM festival.create_index(ix, 'rtree', 'bench_engine_' || e, opts, 'be_points');
	t0 := clock_timestamp();
	PERFORM festival.build(ix);
	INSERT INTO be_result VALUES (e, f, 'build', extract(epoch FROM clock_timestamp() - t0),
								  festival.stats(ix)->'totals');
	before := festival.stats(ix)->'totals';
	t0 := clock_timestamp();
	PERFORM count(*) FROM festival.query_batch(ix, ARRAY(SELECT w FROM be_windows ORDER BY n), 'intersects');
	INSERT INTO be_result
	SELECT e, f, 'query_batch', extract(epoch FROM clock_timestamp() - t0),
		   (SELECT jsonb_object_agg(k, (a.v::text::numeric - coalesce((before->>k)::numeric, 0)))
			FROM jsonb_each(festival.stats(ix)->'totals') a(k, v) WHERE jsonb_typeof(a.v) = 'number');
	PERFORM festival.drop_index(ix);
END $$;
SELECT pg_temp.be_run(engine, framework, options) FROM be_config ORDER BY framework, engine;
\o
SELECT framework, phase, engine,
	   totals->>'pages_written' AS pages_written, totals->>'write_submissions' AS write_subm,
	   totals->>'pages_read' AS pages_read, totals->>'read_submissions' AS read_subm,
	   round(seconds::numeric, 2) AS wall_s,
	   round((totals->>'write_seconds')::numeric, 3) AS write_s,
	   round((totals->>'read_seconds')::numeric, 3) AS read_s
FROM be_result
ORDER BY framework DESC, phase, array_position(ARRAY['sync', 'libaio', 'io_uring'], engine);
