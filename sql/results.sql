--
-- results: the device columns of festival.run, the I/O trace, festival.compare
-- and the seeded generators.
--
-- Run columns and trace rows are checked against festival.stats() deltas
-- (the indices' own totals, a separate path); compare against hand-inserted
-- runs whose medians and gains are computed here by hand; generators against
-- the distributions' definitions.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-------------------------------------------------------------------------------
-- Generators
-------------------------------------------------------------------------------
-- reproducible: same seed, same rows; another seed, other rows
SELECT festival.generate_points('rs_u1', 4000, 'uniform', 7, 'BOX(0 0,1000 1000)') AS n,
	   festival.generate_points('rs_u2', 4000, 'uniform', 7, 'BOX(0 0,1000 1000)') AS n,
	   festival.generate_points('rs_u3', 4000, 'uniform', 8, 'BOX(0 0,1000 1000)') AS n;
SELECT (SELECT count(*) FROM (SELECT id, ST_AsEWKB(geom) FROM rs_u1 EXCEPT SELECT id, ST_AsEWKB(geom) FROM rs_u2) d) AS same_seed_differences,
	   (SELECT count(*) FROM rs_u1 a JOIN rs_u3 b USING (id) WHERE ST_Equals(a.geom, b.geom)) AS other_seed_equal_points;
-- bit-exact across runs and platforms (integer PRNG, no libm): a fingerprint
SELECT md5(string_agg(ST_AsText(geom, 17), ',' ORDER BY id)) AS fingerprint FROM rs_u1 WHERE id <= 100;
-- uniform: inside the extent, a quarter in each quadrant (within 3 sigma = 3 * sqrt(4000 * 3/16) = 82)
SELECT (SELECT count(*) FROM rs_u1 WHERE ST_X(geom) BETWEEN 0 AND 1000 AND ST_Y(geom) BETWEEN 0 AND 1000) AS inside,
	   bool_and(abs(q - 1000) < 82) AS quadrants_even, count(*) AS quadrants
FROM (SELECT count(*) q FROM rs_u1 GROUP BY ST_X(geom) < 500, ST_Y(geom) < 500) qs;
DROP TABLE rs_u2, rs_u3;

-- gaussian_clusters: 80,000 points give round(80000 / 8000) = 10 clusters;
-- point id i is in cluster (i - 1) mod 10, spread sigma = 1% of the side
SELECT festival.generate_points('rs_c', 80000, 'gaussian_clusters', 1, 'BOX(0 0,200 100)') AS n;
SELECT count(*) FILTER (WHERE ST_X(geom) BETWEEN 0 AND 200 AND ST_Y(geom) BETWEEN 0 AND 100) AS inside
FROM rs_c;
SELECT count(*) AS clusters, min(n) AS min_points, max(n) AS max_points,
	   bool_and(sx / 2.0 BETWEEN 0.95 AND 1.05 AND sy / 1.0 BETWEEN 0.95 AND 1.05) AS sigma_1_percent
FROM (SELECT (id - 1) % 10 AS c, count(*) n, stddev_samp(ST_X(geom)) sx, stddev_samp(ST_Y(geom)) sy
	  FROM rs_c GROUP BY 1) g;
-- Irwin-Hall normals are bounded by 6 sigma, and 68% fall within 1 sigma
SELECT bool_and(far_x <= 6 * 2.0 AND far_y <= 6 * 1.0) AS within_6_sigma,
	   bool_and(share_1_sigma BETWEEN 0.66 AND 0.70) AS share_within_1_sigma
FROM (SELECT max(abs(ST_X(p.geom) - m.mx)) far_x, max(abs(ST_Y(p.geom) - m.my)) far_y,
			 avg((abs(ST_X(p.geom) - m.mx) <= 2.0)::int) share_1_sigma
	  FROM rs_c p
	  JOIN (SELECT (id - 1) % 10 c, avg(ST_X(geom)) mx, avg(ST_Y(geom)) my FROM rs_c GROUP BY 1) m
		ON m.c = (p.id - 1) % 10
	  GROUP BY m.c) g;
DROP TABLE rs_c;
-- 1,000 points: at least one cluster
SELECT festival.generate_points('rs_c1', 1000, 'gaussian_clusters', 1, 'BOX(0 0,1 1)') AS n;
SELECT stddev_samp(ST_X(geom)) BETWEEN 0.0095 AND 0.0105 AS one_cluster FROM rs_c1;
DROP TABLE rs_c1;

-- zipf: 32 x 32 cells; the rank-r cell gets 1/r of the top's share, the top
-- H(1024)^-1 = 13.3% of the points
SELECT festival.generate_points('rs_z', 50000, 'zipf', 3, 'BOX(0 0,32 32)') AS n;
WITH cell AS (SELECT floor(ST_X(geom)) cx, floor(ST_Y(geom)) cy, count(*) n FROM rs_z GROUP BY 1, 2),
	 ranked AS (SELECT n, row_number() OVER (ORDER BY n DESC) r FROM cell),
	 h AS (SELECT sum(1.0 / i) AS h FROM generate_series(1, 1024) i)
SELECT abs((SELECT n FROM ranked WHERE r = 1) / 50000.0 - 1 / h) < 0.005 AS top_share,
	   (SELECT n FROM ranked WHERE r = 1)::float8 / (SELECT n FROM ranked WHERE r = 2) BETWEEN 1.7 AND 2.3 AS top_twice_second,
	   (SELECT count(*) FROM rs_z WHERE NOT ST_Intersects(geom, ST_MakeEnvelope(0, 0, 32, 32))) AS outside
FROM h;
DROP TABLE rs_z;

-- windows: squares of the requested share of the extent's area, inside it
SELECT festival.generate_windows('rs_w', 200, 0.5, 'BOX(0 0,1000 1000)', 11) AS n;
SELECT count(*) AS windows,
	   max(abs(ST_Area(geom) / 1e6 * 100 - 0.5)) < 1e-9 AS area_share,
	   bool_and(abs((ST_XMax(geom) - ST_XMin(geom)) - (ST_YMax(geom) - ST_YMin(geom))) < 1e-9) AS squares,
	   bool_and(ST_CoveredBy(geom, ST_MakeEnvelope(0, 0, 1000, 1000))) AS inside,
	   count(DISTINCT ST_XMin(geom)) = 200 AS spread
FROM rs_w;
-- a flat extent: 5% fits (side 7.07 < 10), 20% does not (side 14.1 > 10)
SELECT festival.generate_windows('rs_w5', 10, 5, 'BOX(0 0,100 10)', 1) AS n;
SELECT bool_and(ST_CoveredBy(geom, ST_MakeEnvelope(0, 0, 100, 10))) AS inside,
	   max(abs(ST_Area(geom) / 1000 * 100 - 5)) < 1e-9 AS area_share FROM rs_w5;
DROP TABLE rs_w5;
\set VERBOSITY terse
SELECT festival.generate_windows('rs_w20', 10, 20, 'BOX(0 0,100 10)', 1);
SELECT to_regclass('rs_w20') IS NULL AS not_created;

-- kNN points: uniform, and not the data points of the same seed
SELECT festival.generate_knn_points('rs_k', 50, 'BOX(0 0,1000 1000)', 7) AS n;
SELECT count(*) AS points, count(*) FILTER (WHERE ST_Equals(k.geom, u.geom)) AS same_as_data
FROM rs_k k JOIN rs_u1 u USING (id);

-- errors
SELECT festival.generate_points('rs_bad', 10, 'normal', 1, 'BOX(0 0,1 1)');
SELECT festival.generate_points('rs_bad', 0, 'uniform', 1, 'BOX(0 0,1 1)');
SELECT festival.generate_points('rs_bad', -5, 'uniform', 1, 'BOX(0 0,1 1)');
SELECT festival.generate_points('rs_u1', 10, 'uniform', 1, 'BOX(0 0,1 1)');
SELECT festival.generate_points('rs_bad', 10, 'uniform', NULL, 'BOX(0 0,1 1)');
SELECT festival.generate_points('rs_bad', 10, 'uniform', 1, 'BOX(0 0,0 1)');
SELECT festival.generate_windows('rs_bad', 10, 0, 'BOX(0 0,1 1)', 1);
SELECT festival.generate_windows('rs_bad', 10, 100.5, 'BOX(0 0,1 1)', 1);
SELECT festival.generate_windows('rs_bad', 10, 'NaN', 'BOX(0 0,1 1)', 1);
SELECT festival.generate_windows('rs_bad', 0, 1, 'BOX(0 0,1 1)', 1);
SELECT festival.generate_knn_points('rs_k', 10, 'BOX(0 0,1 1)', 1);
SELECT festival.generate_knn_points(NULL, 10, 'BOX(0 0,1 1)', 1);
\set VERBOSITY default
SELECT to_regclass('rs_bad') IS NULL AS nothing_created;
-- 100% is the whole extent
SELECT festival.generate_windows('rs_all', 1, 100, 'BOX(0 0,1 1)', 1) AS n;
SELECT ST_Equals(geom, ST_MakeEnvelope(0, 0, 1, 1)) AS whole_extent FROM rs_all;
DROP TABLE rs_all;

-------------------------------------------------------------------------------
-- Runs: device columns and the I/O trace, for every node store
-------------------------------------------------------------------------------
SELECT festival.create_device('rs_dev', io => 'buffered');
SELECT festival.create_index('rs_none', 'rtree', 'rs_dev', '{"page_size": 1024}', 'rs_u1') > 0 AS created,
	   festival.create_index('rs_fast', 'rtree', 'rs_dev', '{"page_size": 1024, "framework": "fast"}', 'rs_u1') > 0 AS created,
	   festival.create_index('rs_efind', 'rtree', 'rs_dev', '{"page_size": 1024, "framework": "efind"}', 'rs_u1') > 0 AS created,
	   festival.create_index('rs_cached', 'rtree', 'rs_dev', '{"page_size": 1024, "cache": "lru", "cache_size": 16384}', 'rs_u1') > 0 AS created;

CREATE TEMP TABLE rs_idx (idx text);
INSERT INTO rs_idx VALUES ('rs_none'), ('rs_fast'), ('rs_efind'), ('rs_cached');
CREATE TEMP TABLE rs_snap (tag text, idx text, totals jsonb);
-- indices opened before the run: their totals start here
INSERT INTO rs_snap SELECT 'before', idx, festival.stats(idx)->'totals' FROM rs_idx;

SELECT festival.begin_run('rs traced', trace => true) AS run_id \gset
SELECT sum(festival.build(idx)) AS built FROM rs_idx;
-- window queries, each checked against PostGIS
SELECT count(*) AS queries,
	   count(*) FILTER (WHERE n_index = n_brute) AS agree
FROM rs_w w, rs_idx i,
	 LATERAL (SELECT count(*) n_index FROM festival.query(i.idx, w.geom)) a,
	 LATERAL (SELECT count(*) n_brute FROM rs_u1 p WHERE ST_Intersects(p.geom, w.geom)) b
WHERE w.id <= 20;
-- the write-through tree read whole again and again (no buffer or cache
-- keeps its pages), so that the trace outgrows two of its batches of 10000
-- rows: a write-through 'insert' build commits per batch of rows and
-- writes few pages
SELECT sum(n) AS read_back
FROM generate_series(1, 120) g,
	 LATERAL (SELECT count(*) n FROM festival.query('rs_none', ST_MakeEnvelope(-g, -g, 1000 + g, 1000 + g))) q;
SELECT festival.insert(idx, 5000, 'POINT(1 1)') AS inserted FROM rs_idx ORDER BY idx;
SELECT festival.flush(idx) FROM rs_idx;
SELECT festival.end_run() = :run_id AS same_id;
INSERT INTO rs_snap SELECT 'after', idx, festival.stats(idx)->'totals' FROM rs_idx;

CREATE TEMP TABLE rs_delta AS
SELECT a.idx, k AS key, (a.totals->>k)::bigint - coalesce((b.totals->>k)::bigint, 0) AS n
FROM rs_snap a JOIN rs_snap b ON b.idx = a.idx AND b.tag = 'before'
CROSS JOIN jsonb_object_keys(a.totals) k
WHERE a.tag = 'after' AND jsonb_typeof(a.totals->k) = 'number' AND k NOT LIKE '%seconds';
CREATE TEMP TABLE rs_level_delta AS
SELECT a.idx, kind, l.key::int AS level,
	   l.value::bigint - coalesce((b.totals->kind->>l.key)::bigint, 0) AS n
FROM rs_snap a JOIN rs_snap b ON b.idx = a.idx AND b.tag = 'before'
CROSS JOIN unnest(ARRAY['reads_per_level', 'writes_per_level']) kind
CROSS JOIN jsonb_each_text(a.totals->kind) l
WHERE a.tag = 'after';

-- the row's device columns
SELECT device, profile, traced, device_seconds, erases, write_amplification
FROM festival.run WHERE run_id = :run_id;
SELECT r.read_submissions = (SELECT sum(n) FROM rs_delta WHERE key = 'read_submissions') AS read_submissions,
	   r.write_submissions = (SELECT sum(n) FROM rs_delta WHERE key = 'write_submissions') AS write_submissions,
	   r.pages_read = (SELECT sum(n) FROM rs_delta WHERE key = 'pages_read') AS pages_read,
	   r.pages_written = (SELECT sum(n) FROM rs_delta WHERE key = 'pages_written') AS pages_written,
	   r.read_submissions > 0 AND r.write_submissions > 0 AS nonzero
FROM festival.run r WHERE run_id = :run_id;
-- per level: the sum over the indices of their per-level deltas
SELECT kind, count(*) AS levels, bool_and(agree) AS agree
FROM (SELECT d.kind, d.level,
			 sum(d.n) = (CASE d.kind WHEN 'reads_per_level' THEN r.reads_per_level ELSE r.writes_per_level END
						 ->> d.level::text)::bigint AS agree
	  FROM rs_level_delta d CROSS JOIN festival.run r
	  WHERE r.run_id = :run_id AND d.n > 0
	  GROUP BY d.kind, d.level, r.reads_per_level, r.writes_per_level) x
GROUP BY kind ORDER BY kind;

-- the trace: one row per page the devices read or wrote, numbered 1..N
SELECT count(*) = r.pages_read + r.pages_written AS rows_are_pages,
	   count(*) FILTER (WHERE access = 'read') = r.pages_read AS reads,
	   count(*) FILTER (WHERE access = 'write') = r.pages_written AS writes,
	   min(seq) = 1 AND max(seq) = count(*) AS seq_dense,
	   max(submission) = r.read_submissions + r.write_submissions AS submissions,
	   count(*) > 2 * 10000 AS stored_in_several_batches
FROM festival.io_trace t JOIN festival.run r USING (run_id)
WHERE run_id = :run_id
GROUP BY r.pages_read, r.pages_written, r.read_submissions, r.write_submissions;
-- per index, the index's own page counters
SELECT d.idx, t.n = d.n AS trace_equals_counters
FROM (SELECT idx, sum(n) n FROM rs_delta WHERE key IN ('pages_read', 'pages_written') GROUP BY idx) d
LEFT JOIN (SELECT index_name, count(*) n FROM festival.io_trace WHERE run_id = :run_id GROUP BY 1) t
	ON t.index_name = d.idx
ORDER BY d.idx;
-- node pages by level: the write-through store counts exactly the node pages
-- it transfers; the others read more pages than they count per level (FAST
-- rereads unmodified pages of a flushing unit, caches write back)
SELECT t.index_name, t.access, t.level, t.n = d.n AS equal, t.n >= d.n AS at_least
FROM (SELECT index_name, access, level, count(*) n FROM festival.io_trace
	  WHERE run_id = :run_id AND level IS NOT NULL GROUP BY 1, 2, 3) t
JOIN rs_level_delta d ON d.idx = t.index_name AND d.level = t.level
	 AND d.kind = CASE t.access WHEN 'read' THEN 'reads_per_level' ELSE 'writes_per_level' END
WHERE t.index_name = 'rs_none'
ORDER BY 1, 2, 3;
SELECT count(*) AS meta_or_free_pages_without_level,
	   count(*) FILTER (WHERE page IN (0, 1)) > 0 AS meta_pages_seen
FROM festival.io_trace WHERE run_id = :run_id AND level IS NULL;

-- a run without trace records nothing
SELECT festival.begin_run('rs untraced') AS run2 \gset
SELECT count(*) AS answers FROM festival.query('rs_none', ST_MakeEnvelope(0, 0, 500, 500));
SELECT festival.end_run() = :run2 AS same_id;
SELECT traced, pages_read > 0 AS read_pages,
	   (SELECT count(*) FROM festival.io_trace t WHERE t.run_id = :run2) AS trace_rows
FROM festival.run WHERE run_id = :run2;

-- an operation an ERROR interrupts leaves neither counters nor trace rows:
-- the failing insert opens rs_none again (reading its meta pages, 0 and 1);
-- the query after it finds the index open
SELECT festival.close('rs_none') AS closed;
SELECT festival.begin_run('rs failed op', trace => true) AS run3 \gset
-- opens the index (meta pages read), then refuses the SRID
\set VERBOSITY terse
SELECT festival.insert('rs_none', 1, 'SRID=4326;POINT(1 1)');
\set VERBOSITY default
SELECT count(*) AS answers FROM festival.query('rs_none', ST_MakeEnvelope(0, 0, 100, 100));
SELECT festival.end_run() = :run3 AS same_id;
SELECT r.pages_read > 0 AS read_pages, r.metrics->>'queries' AS queries, r.metrics->>'inserts' AS inserts,
	   (SELECT count(*) FROM festival.io_trace t WHERE t.run_id = :run3) = r.pages_read + r.pages_written AS trace_matches,
	   (SELECT count(*) FROM festival.io_trace t WHERE t.run_id = :run3 AND page IN (0, 1)) AS meta_reads_of_failed_open
FROM festival.run r WHERE run_id = :run3;

\set VERBOSITY terse
SELECT festival.begin_run('x', trace => NULL);
\set VERBOSITY default

-- modelled elapsed time (index CPU + device seconds) only when every
-- operation of the run measured its CPU time; NULL, never the device time
-- alone, when some ran with festival.track_cpu_time off
INSERT INTO festival.run (run_id, label, started_at, ended_at, wall_seconds, cpu_seconds,
	io_seconds, index_seconds, refine_seconds, pages_read, pages_written, nodes_visited,
	splits, metrics, config, device_seconds)
SELECT nextval('festival.run_run_id_seq'), label, now(), now(), 1, 0, 0, 0, 0, 0, 0, 0, 0,
	   m, '{}', 2.5
FROM (VALUES ('rs timed', '{"index_cpu_seconds": 0.5, "cpu_untimed_operations": 0}'::jsonb),
			 ('rs untimed', '{"index_cpu_seconds": 0.5, "cpu_untimed_operations": 3}'::jsonb)) v(label, m);
SELECT label, device_seconds, model_elapsed_seconds FROM festival.run
WHERE label IN ('rs timed', 'rs untimed') ORDER BY label;
DELETE FROM festival.run WHERE label IN ('rs timed', 'rs untimed');

-------------------------------------------------------------------------------
-- compare: medians per label, gain = (baseline - candidate) / baseline * 100
-------------------------------------------------------------------------------
INSERT INTO festival.run (run_id, label, started_at, ended_at, wall_seconds, cpu_seconds,
	io_seconds, index_seconds, refine_seconds, pages_read, pages_written, nodes_visited,
	splits, metrics, config, device_seconds, read_submissions, write_submissions, erases,
	write_amplification)
SELECT nextval('festival.run_run_id_seq'), label, now(), now(), wall, wall / 2, 1, 1, 0,
	   pages, 0, 10, 0,
	   jsonb_build_object('index_cpu_seconds', wall / 10, 'log_syncs', er * 100), '{}',
	   dev, pages, 0, er, wa
FROM (VALUES ('rs base', 10.0, 100, 4.0, 10, 1.5),
			 ('rs base', 12.0, 300, 6.0, 20, 2.5),
			 ('rs base', 20.0, 200, 8.0, 30, NULL),
			 ('rs cand', 6.0, 150, 3.0, 5, 1.2),
			 ('rs cand', 9.0, 250, 5.0, 15, 1.4)) v(label, wall, pages, dev, er, wa);
-- by hand: wall 12 vs 7.5 -> 37.5; pages 200 vs 200 -> 0; device 6 vs 4 ->
-- 33.33; erases 20 vs 10 -> 50; write amplification 2 vs 1.3 -> 35;
-- pages written 0 vs 0 -> NULL; modelled elapsed (index CPU + device)
-- 1.2 + 6 = 7.2 vs 0.75 + 4 = 4.75 -> 34.0278; log syncs 2000 vs 1000 -> 50;
-- flushes (no counter) 0 vs 0 -> NULL
SELECT metric, baseline_value, candidate_value, round(gain_percent::numeric, 4) AS gain_percent
FROM festival.compare('rs base', 'rs cand');
-- reversed: a loss
SELECT metric, round(gain_percent::numeric, 4) AS gain_percent
FROM festival.compare('rs cand', 'rs base') WHERE metric IN ('wall_seconds', 'erases');
SELECT * FROM festival.compare('rs bse', 'rs cand');
SELECT * FROM festival.compare('rs base', 'nothing like it at all');
\set VERBOSITY terse
SELECT * FROM festival.compare(NULL, 'rs cand');
SELECT * FROM festival.compare('rs base', NULL);
\set VERBOSITY default

-- a configuration named by some of its keys: every repetition of it (rep=
-- is no key of a configuration), whatever the keys it shares with others
INSERT INTO festival.run (run_id, label, started_at, ended_at, wall_seconds, cpu_seconds,
	io_seconds, index_seconds, refine_seconds, pages_read, pages_written, nodes_visited,
	splits, metrics, config, device_seconds)
SELECT nextval('festival.run_run_id_seq'), label, now(), now(), wall, 0, 0, 0, 0,
	   0, 0, 0, 0, jsonb_build_object('index_cpu_seconds', 0), '{}', 0
FROM (VALUES ('exp=rsk structure=rtree split=linear page=4096 workload=build rep=1', 10.0),
			 ('exp=rsk structure=rtree split=linear page=4096 workload=build rep=2', 14.0),
			 ('exp=rsk structure=rtree split=linear page=4096 workload=build rep=3', 30.0),
			 ('exp=rsk structure=rtree split=quadratic page=4096 workload=build', 11.0),
			 ('exp=rsk structure=rstartree reinsert=30 page=4096 workload=build', 7.0),
			 ('exp=rsk structure=rstartree reinsert=30 page=4096 workload=build', 8.0)) v(label, wall);
-- by hand: median of 10, 14, 30 = 14 against median of 7, 8 = 7.5 -> 46.4286
SELECT metric, baseline_value, candidate_value, round(gain_percent::numeric, 4) AS gain_percent
FROM festival.compare('structure=rtree split=linear', 'workload=build structure=rstartree')
WHERE metric = 'wall_seconds';
-- a label names its runs only: rep=2's alone
SELECT baseline_value FROM festival.compare(
	'exp=rsk structure=rtree split=linear page=4096 workload=build rep=2', 'structure=rstartree')
WHERE metric = 'wall_seconds';
SELECT cardinality(festival.runs_named('exp=rsk split=quadratic')) AS quadratic_runs;
-- two configurations have structure=rtree: name more keys
SELECT * FROM festival.compare('structure=rtree', 'structure=rstartree');
SELECT * FROM festival.compare('structure=rtree split=exponential', 'structure=rstartree');
DELETE FROM festival.run WHERE label LIKE 'exp=rsk %';

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
DELETE FROM festival.io_trace WHERE run_id >= :run_id;
DELETE FROM festival.run WHERE run_id >= :run_id;
SELECT festival.drop_index(idx) FROM rs_idx;
SELECT festival.drop_device('rs_dev');
DROP TABLE rs_u1, rs_w, rs_k, rs_idx, rs_snap, rs_delta, rs_level_delta;
RESET festival.progress_interval;
RESET client_min_messages;
