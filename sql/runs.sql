--
-- runs: festival.begin_run / festival.end_run and the rows of festival.run.
--
-- Times vary between runs, so they are only checked for sanity, never
-- printed; counters are deterministic and are compared with the deltas of
-- festival.stats() over the run.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('ru_dev', io => 'buffered');
SELECT festival.create_index('ru_points', 'rtree', 'ru_dev', '{"page_size": 1024}', 'fx_pts') > 0 AS created;
SELECT festival.create_index('ru_mixed', 'rtree', 'ru_dev', '{"split": "linear"}', 'fx_src') > 0 AS created;
SELECT festival.build('ru_points') AS built, festival.build('ru_mixed') AS built;

-- the counters of each index before the run
CREATE TEMP TABLE ru_snap (tag text, idx text, totals jsonb);
INSERT INTO ru_snap
SELECT 'before', name, festival.stats(name)->'totals'
FROM unnest(ARRAY['ru_points', 'ru_mixed']) name;

-------------------------------------------------------------------------------
-- A run with work on three indices
-------------------------------------------------------------------------------
SELECT festival.begin_run('three indices') AS run_id \gset
SELECT :run_id > 0 AS has_id;

-- 4 queries on ru_points, 2 on ru_mixed
SELECT count(*) AS answers FROM festival.query('ru_points', ST_MakeEnvelope(20, 30, 80, 90));
SELECT count(*) AS answers FROM festival.query('ru_points', ST_MakeEnvelope(20, 30, 80, 90), 'within');
SELECT count(*) AS answers FROM festival.query('ru_points', 'POINT(40 40)', 'equals');
SELECT count(*) AS answers FROM festival.query('ru_points', 'POLYGON((0 0, 100 0, 0 100, 0 0))', 'intersects', false);
SELECT count(*) AS answers FROM festival.query('ru_mixed', 'LINESTRING(0 0, 300 300)', 'intersects');
SELECT count(*) AS answers FROM festival.query('ru_mixed', ST_MakeEnvelope(250, 250, 264, 264), 'touches');
-- 3 inserts, 2 deletes (one of them finds nothing), 1 update
SELECT festival.insert('ru_points', 90001, 'POINT(500 500)') AS inserted,
	   festival.insert('ru_points', 90002, 'POINT(501 500)') AS inserted,
	   festival.insert('ru_points', 90001, 'POINT(500 500)', if_absent => true) AS inserted;
SELECT festival.delete('ru_points', 90002, 'POINT(501 500)') AS deleted,
	   festival.delete('ru_points', 90002, 'POINT(501 500)') AS deleted_again;
SELECT festival.update('ru_points', 90001, 'POINT(500 500)', 90003, 'POINT(502 502)') AS updated;
-- a third index, created and built inside the run: 1 build of 1221 objects
SELECT festival.create_index('ru_inside', 'rtree', 'ru_dev', '{"page_size": 2048, "split": "linear"}',
	'fx_pts') > 0 AS created;
SELECT festival.build('ru_inside') AS built;

SELECT festival.end_run() = :run_id AS same_id;

INSERT INTO ru_snap
SELECT 'after', name, festival.stats(name)->'totals'
FROM unnest(ARRAY['ru_points', 'ru_mixed', 'ru_inside']) name;

-- one row, with the label and the operations counted
SELECT label, metrics->>'queries' AS queries, metrics->>'inserts' AS inserts,
	   metrics->>'deletes' AS deletes, metrics->>'updates' AS updates,
	   metrics->>'builds' AS builds, metrics->>'results' AS results
FROM festival.run WHERE run_id = :run_id;

-- times are present and sane (not printed)
SELECT started_at <= ended_at AS ordered,
	   wall_seconds >= 0 AND cpu_seconds >= 0 AND io_seconds >= 0
		   AND index_seconds >= 0 AND refine_seconds >= 0 AS nonnegative,
	   index_seconds <= wall_seconds AS index_within_wall,
	   refine_seconds > 0 AS refined,
	   (metrics->>'index_seconds')::float8 = index_seconds AS metrics_agree
FROM festival.run WHERE run_id = :run_id;

-- The run's counters are the sum of what each index counted during it.
-- The operations and their answers are printed; the I/O figures depend on
-- how the node store writes, so only their agreement is.
CREATE TEMP TABLE ru_delta AS
	SELECT key, sum((a.totals->>key)::bigint - coalesce((b.totals->>key)::bigint, 0)) AS n
	FROM ru_snap a
	LEFT JOIN ru_snap b ON b.idx = a.idx AND b.tag = 'before'
	CROSS JOIN jsonb_object_keys(a.totals) key
	WHERE a.tag = 'after' AND jsonb_typeof(a.totals->key) = 'number'
		  AND key NOT LIKE '%seconds'
		  -- festival.stats() is an operation, counted after the totals it
		  -- returns: the 'before' snapshot's call is in the delta, not the run
		  AND key <> 'cpu_untimed_operations'
	GROUP BY key;
SELECT d.key, d.n AS stats_delta, (r.metrics->>d.key)::bigint AS run_metrics
FROM ru_delta d CROSS JOIN festival.run r
WHERE r.run_id = :run_id
  AND d.key IN ('queries', 'inserts', 'deletes', 'updates', 'builds', 'candidates', 'results', 'refined')
ORDER BY d.key;
SELECT count(*) > 0 AS has_counters,
	   bool_and(d.n = (r.metrics->>d.key)::bigint) AS all_same_in_run
FROM ru_delta d CROSS JOIN festival.run r
WHERE r.run_id = :run_id;
SELECT d.key, d.n > 0 AS nonzero, d.n = (r.metrics->>d.key)::bigint AS same_in_run
FROM ru_delta d CROSS JOIN festival.run r
WHERE r.run_id = :run_id
  AND d.key IN ('pages_read', 'pages_written', 'nodes_visited', 'nodes_written', 'splits_leaf',
				'read_submissions', 'write_submissions', 'meta_writes', 'syncs')
ORDER BY d.key;
SELECT pages_read = (metrics->>'pages_read')::bigint AS pages_read,
	   pages_written = (metrics->>'pages_written')::bigint AS pages_written,
	   nodes_visited = (metrics->>'nodes_visited')::bigint AS nodes_visited,
	   splits = (metrics->>'splits_leaf')::bigint + (metrics->>'splits_internal')::bigint AS splits,
	   pages_read > 0 AND pages_written > 0 AND nodes_visited > 0 AND splits > 0 AS nonzero
FROM festival.run WHERE run_id = :run_id;

-- config: every index the run used, in full
SELECT key AS idx, value->>'structure' AS structure, value->'device'->>'name' AS device,
	   value->'options' AS options, value->>'source' AS source
FROM festival.run, jsonb_each(config)
WHERE run_id = :run_id
ORDER BY key;
SELECT key AS idx, value->'options' = i.options AS options_as_catalog,
	   value->'derived' AS derived, value->'device' AS device
FROM festival.run, jsonb_each(config)
JOIN festival.index i ON i.name = key
WHERE run_id = :run_id
ORDER BY key;
-- every counter of festival.stats() is in metrics
SELECT count(*) AS stats_keys,
	   count(*) FILTER (WHERE (SELECT metrics FROM festival.run WHERE run_id = :run_id) ? k) AS in_metrics
FROM jsonb_object_keys(festival.stats('ru_points')->'totals') k;

-------------------------------------------------------------------------------
-- One run at a time
-------------------------------------------------------------------------------
SELECT festival.begin_run('first') > :run_id AS later_id;
\set VERBOSITY terse
SELECT festival.begin_run('second');
\set VERBOSITY default
-- the first run goes on and is the one stored
SELECT count(*) AS answers FROM festival.query('ru_points', 'POINT(40 40)');
SELECT festival.end_run() > :run_id AS ended;
SELECT label, metrics->>'queries' AS queries, jsonb_object_keys(config) AS idx
FROM festival.run WHERE label IN ('first', 'second');

-- ending without a run, twice
\set VERBOSITY terse
SELECT festival.end_run();
SELECT festival.end_run();
-- labels must be given
SELECT festival.begin_run('');
SELECT festival.begin_run(NULL);
\set VERBOSITY default

-------------------------------------------------------------------------------
-- A baseline run without festival work (a PostGIS query only) is stored too
-------------------------------------------------------------------------------
SELECT festival.begin_run('baseline: PostGIS brute force') > 0 AS started;
SELECT count(*) AS brute FROM fx_src WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 30, 80, 90));
SELECT festival.end_run() > 0 AS ended;
SELECT label, pages_read, pages_written, nodes_visited, splits, config,
	   (SELECT bool_and(value::numeric = 0) FROM jsonb_each_text(metrics)
		WHERE jsonb_typeof(metrics->key) = 'number') AS all_counters_zero,
	   wall_seconds >= 0 AND cpu_seconds >= 0 AS times_sane
FROM festival.run WHERE label = 'baseline: PostGIS brute force';

-- an empty run as well
SELECT festival.begin_run('empty') > 0 AS started;
SELECT festival.end_run() > 0 AS ended;
SELECT label, metrics->>'queries' AS queries, config FROM festival.run WHERE label = 'empty';

-- the runs of this file, in order
SELECT label FROM festival.run WHERE run_id >= :run_id ORDER BY run_id;

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
DELETE FROM festival.run WHERE run_id >= :run_id;
DROP TABLE ru_snap, ru_delta;
SELECT festival.drop_index(name) FROM unnest(ARRAY['ru_points', 'ru_mixed', 'ru_inside']) name;
SELECT festival.drop_device('ru_dev');
RESET festival.progress_interval;
RESET client_min_messages;
