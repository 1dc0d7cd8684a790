--
-- frameworks: every node store (framework 'none', FAST and eFIND) under the
-- R-tree with both splits, with every flushing policy, read buffer policy
-- and temporal control of eFIND, logs small enough to be compacted again
-- and again, and every page cache policy under each framework.
--
-- All indices share one source table, fw_src, and receive the same
-- modifications in the same order: a build, inserts, deletes, updates, a
-- festival.flush, a close and reopen in the same session and a new
-- session (\c), and calls that are refused.  After every phase the
-- answers of festival.query for every predicate and a selection of query
-- geometries must equal PostGIS brute force over fw_src, festival.check()
-- must return no rows, and every index must hold exactly the entries of
-- the write-through index (read leaf by leaf with festival.node).  Counters
-- show that the buffers really flushed, the logs were compacted, the
-- buffered nodes were merged with their stored versions and the caches
-- hit and evicted (as booleans: their values depend on the policies, and
-- times are never printed).
--
-- Small configurations use 1024-byte pages (M = 24, m = 12) and buffers of
-- at most 32 kB, a few dozen nodes, so that flushes happen all the time.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('fw_dev', io => 'buffered');

-- the source: every fourth object of fx_src (all kinds of geometry,
-- copies, points on edges) and the odd ones (8001..8014); half of them are
-- built, the other half inserted one at a time afterwards
CREATE TABLE fw_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO fw_src SELECT id, geom FROM fx_src WHERE id % 8 = 0 OR id > 8000;
CREATE TABLE fw_later AS SELECT id, geom FROM fx_src WHERE id % 8 = 4 AND id < 8000;
SELECT (SELECT count(*) FROM fw_src) AS built_objects, (SELECT count(*) FROM fw_later) AS later_objects;

-------------------------------------------------------------------------------
-- The configurations.  Options not given take their defaults.
-------------------------------------------------------------------------------
CREATE TABLE fw_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, options jsonb NOT NULL);
INSERT INTO fw_index VALUES
	-- write-through, alone and over each page cache
	( 1, 'fw_none_lin', '{"split": "linear", "page_size": 1024}'),
	( 2, 'fw_none_quad', '{"split": "quadratic", "page_size": 1024}'),
	( 3, 'fw_none_lru', '{"split": "linear", "page_size": 1024, "cache": "lru", "cache_size": 16384}'),
	( 4, 'fw_none_hlru', '{"split": "quadratic", "page_size": 1024, "cache": "hlru", "cache_size": 16384}'),
	( 5, 'fw_none_s2q', '{"split": "linear", "page_size": 1024, "cache": "s2q", "cache_size": 16384}'),
	( 6, 'fw_none_2q', '{"split": "quadratic", "page_size": 1024, "cache": "2q", "cache_size": 16384}'),
	-- FAST: every flushing policy with a small buffer, and the defaults
	( 7, 'fw_fast_all', '{"framework": "fast", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "flushing_unit": 4, "flushing_policy": "flush_all"}'),
	( 8, 'fw_fast_random', '{"framework": "fast", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "flushing_unit": 3, "flushing_policy": "random", "random_seed": 7}'),
	( 9, 'fw_fast_fast', '{"framework": "fast", "split": "linear", "page_size": 1024,
		"buffer_size": 12288, "flushing_unit": 5, "flushing_policy": "fast"}'),
	(10, 'fw_fast_star', '{"framework": "fast", "split": "quadratic", "page_size": 1024,
		"buffer_size": 8192, "flushing_unit": 2, "flushing_policy": "fast_star"}'),
	(11, 'fw_fast_default', '{"framework": "fast"}'),
	-- FAST over each page cache
	(12, 'fw_fast_lru', '{"framework": "fast", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "fast", "cache": "lru", "cache_size": 8192}'),
	(13, 'fw_fast_hlru', '{"framework": "fast", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "flush_all", "cache": "hlru", "cache_size": 8192}'),
	(14, 'fw_fast_s2q', '{"framework": "fast", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "random", "cache": "s2q", "cache_size": 8192}'),
	(15, 'fw_fast_2q', '{"framework": "fast", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "cache": "2q", "cache_size": 8192, "cache_a1in_percent": 50}'),
	-- eFIND: every flushing policy, read buffer policy and temporal control
	(16, 'fw_efind_m', '{"framework": "efind", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "flushing_unit": 4, "flushing_policy": "m",
		"read_buffer_policy": "none", "read_buffer_percent": 0, "temporal_control": "none"}'),
	(17, 'fw_efind_mh', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "flushing_unit": 3, "flushing_policy": "mh",
		"read_buffer_policy": "lru", "read_buffer_percent": 30, "temporal_control": "read"}'),
	(18, 'fw_efind_mha', '{"framework": "efind", "split": "linear", "page_size": 1024,
		"buffer_size": 32768, "flushing_unit": 2, "flushing_policy": "mha",
		"read_buffer_policy": "hlru", "read_buffer_percent": 25, "temporal_control": "write",
		"write_tc_min_distance": 3, "write_tc_stride": 20, "write_tc_size": 10}'),
	(19, 'fw_efind_mhao', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "flushing_unit": 5, "flushing_policy": "mhao",
		"read_buffer_policy": "s2q", "read_buffer_percent": 20, "temporal_control": "both",
		"timestamp_percent": 30}'),
	(20, 'fw_efind_2q', '{"framework": "efind", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "flushing_unit": 1, "flushing_policy": "mh",
		"read_buffer_policy": "2q", "read_buffer_percent": 40, "twoq_a1in_percent": 30,
		"temporal_control": "both", "timestamp_percent": 100}'),
	(21, 'fw_efind_default', '{"framework": "efind"}'),
	-- eFIND over each page cache
	(22, 'fw_efind_lru', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "cache": "lru", "cache_size": 8192}'),
	(23, 'fw_efind_hlru', '{"framework": "efind", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "flushing_policy": "m", "cache": "hlru", "cache_size": 8192}'),
	(24, 'fw_efind_s2q', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "read_buffer_policy": "lru", "cache": "s2q", "cache_size": 8192}'),
	(25, 'fw_efind_c2q', '{"framework": "efind", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "read_buffer_policy": "none", "read_buffer_percent": 0,
		"temporal_control": "write", "cache": "2q", "cache_size": 8192}'),
	-- logs so small that they are compacted (and units flushed) over and over
	(26, 'fw_fast_log', '{"framework": "fast", "split": "quadratic", "page_size": 1024,
		"buffer_size": 32768, "log_size": 8192}'),
	(27, 'fw_efind_log', '{"framework": "efind", "split": "linear", "page_size": 1024,
		"buffer_size": 32768, "log_size": 6000, "flushing_policy": "mha"}'),
	-- without a log
	(28, 'fw_fast_nolog', '{"framework": "fast", "split": "linear", "page_size": 1024,
		"buffer_size": 16384, "log_size": 0}'),
	(29, 'fw_efind_nolog', '{"framework": "efind", "split": "quadratic", "page_size": 1024,
		"buffer_size": 16384, "log_size": 0, "flushing_policy": "mhao"}');

SELECT ord, name, festival.create_index(name, 'rtree', 'fw_dev', options, 'fw_src') > 0 AS created
FROM fw_index ORDER BY ord;

-- the stored options hold what was asked (defaults filled in for the rest)
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE i.options <@ c.options) AS options_kept
FROM fw_index i JOIN festival.index c USING (name);

-- answers of every index against the brute force over fw_src, for every
-- predicate and the query geometries of qids: one row per index with its
-- answers, those missing and extra (0 and 0), the rows of festival.check()
-- and the entries that differ from those of the write-through index
-- fw_none_lin (every index received the same modifications, so all hold
-- the same entries, whatever the shape of their trees); an error (which no
-- index should raise) is reported in its row instead of ending the
-- comparison
CREATE TABLE fw_brute (pred text, qid int, id bigint);
CREATE TABLE fw_reference (id bigint, x1 float8, y1 float8, x2 float8, y2 float8);
CREATE FUNCTION fw_compare_all()
RETURNS TABLE (ord int, name text, answers numeric, missing numeric, extra numeric, check_rows bigint,
			   other_entries bigint, error text)
LANGUAGE plpgsql AS $$
DECLARE
	qids int[] := ARRAY[2, 8, 12, 21, 29, 36];
	i record;
BEGIN
	TRUNCATE fw_brute, fw_reference;
	INSERT INTO fw_brute SELECT * FROM fx_brute('fw_src', qids);
	INSERT INTO fw_reference SELECT * FROM fixture.entries('fw_none_lin');
	FOR i IN SELECT * FROM fw_index ORDER BY fw_index.ord LOOP
		ord := i.ord;
		name := i.name;
		error := NULL;
		BEGIN
			SELECT sum(c.festival), sum(c.missing), sum(c.extra) INTO answers, missing, extra
			FROM fx_compare(i.name, 'fw_brute', qids) c;
			check_rows := (SELECT count(*) FROM festival.check(i.name));
			WITH e AS MATERIALIZED (SELECT * FROM fixture.entries(i.name))
			SELECT (SELECT count(*) FROM (TABLE e EXCEPT ALL TABLE fw_reference) d)
				   + (SELECT count(*) FROM (TABLE fw_reference EXCEPT ALL TABLE e) d)
			INTO other_entries;
		EXCEPTION WHEN OTHERS THEN
			answers := NULL;
			missing := NULL;
			extra := NULL;
			check_rows := NULL;
			other_entries := NULL;
			error := SQLERRM;
		END;
		RETURN NEXT;
	END LOOP;
END
$$;

-- one line per phase: the brute force's answers and entries, the number
-- of indices that agree with both, and a line for each index that does not
-- (none)
CREATE FUNCTION fw_verify(phase text)
RETURNS TABLE (what text, name text, answers numeric, missing numeric, extra numeric, check_rows bigint,
			   other_entries bigint, error text)
LANGUAGE plpgsql AS $$
BEGIN
	CREATE TEMP TABLE fw_result AS SELECT * FROM fw_compare_all();
	RETURN QUERY
		SELECT phase || ': brute force', NULL::text, (SELECT count(*)::numeric FROM fw_brute),
			   NULL::numeric, NULL::numeric, NULL::bigint, (SELECT count(*) FROM fw_reference), NULL::text
		UNION ALL
		SELECT phase || ': indices agreeing', NULL, count(*)::numeric, NULL, NULL, NULL, NULL, NULL
		FROM fw_result r
		WHERE r.answers = (SELECT count(*) FROM fw_brute) AND r.missing = 0 AND r.extra = 0
			  AND r.check_rows = 0 AND r.other_entries = 0
		UNION ALL
		SELECT phase || ': WRONG', r.name, r.answers, r.missing, r.extra, r.check_rows, r.other_entries,
			   r.error
		FROM fw_result r
		WHERE r.error IS NOT NULL
			  OR NOT (r.answers = (SELECT count(*) FROM fw_brute) AND r.missing = 0 AND r.extra = 0
					  AND r.check_rows = 0 AND r.other_entries = 0);
	DROP TABLE fw_result;
END
$$;

-------------------------------------------------------------------------------
-- Phase 1: build (one insert at a time, every one a modification)
-------------------------------------------------------------------------------
SELECT count(*) AS indices, min(built) AS min_built, max(built) AS max_built
FROM (SELECT festival.build(name) AS built FROM fw_index) s;
SELECT * FROM fw_verify('build');

-------------------------------------------------------------------------------
-- Phase 2: insert the rest, one at a time, in a mixed order
-------------------------------------------------------------------------------
INSERT INTO fw_src SELECT id, geom FROM fw_later;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.insert(i.name, l.id, l.geom) AS ok
	  FROM fw_later l CROSS JOIN fw_index i
	  ORDER BY (l.id * 7919) % 10007, l.id, i.ord) s;
SELECT * FROM fw_verify('insert');

-------------------------------------------------------------------------------
-- Phase 3: delete two objects in five (underfull nodes are eliminated)
-------------------------------------------------------------------------------
CREATE TABLE fw_gone AS SELECT id, geom FROM fw_src WHERE id % 5 IN (1, 3) AND id < 8000;
DELETE FROM fw_src WHERE id IN (SELECT id FROM fw_gone);
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.delete(i.name, g.id, g.geom) AS ok
	  FROM fw_gone g CROSS JOIN fw_index i
	  ORDER BY (g.id * 31) % 10007, g.id, i.ord) s;
SELECT * FROM fw_verify('delete');

-------------------------------------------------------------------------------
-- Phase 4: update one object in four (ids that are multiples of 16): moved
-- by (3, -2), one in three of them under a new id
-------------------------------------------------------------------------------
CREATE TABLE fw_moved AS
	SELECT id AS old_id, geom AS old_geom,
		   CASE WHEN id % 3 = 0 THEN id + 100000 ELSE id END AS new_id,
		   ST_Translate(geom, 3, -2) AS new_geom
	FROM fw_src WHERE id % 16 = 0;
DELETE FROM fw_src WHERE id IN (SELECT old_id FROM fw_moved);
INSERT INTO fw_src SELECT new_id, new_geom FROM fw_moved;
SELECT count(*) AS calls, count(*) FILTER (WHERE ok) AS returned_true
FROM (SELECT festival.update(i.name, m.old_id, m.old_geom, m.new_id, m.new_geom) AS ok
	  FROM fw_moved m CROSS JOIN fw_index i
	  ORDER BY (m.old_id * 13) % 10007, m.old_id, i.ord) s;
SELECT * FROM fw_verify('update');

-- the work the frameworks did in this session (since the indices were
-- created): flushes of a full buffer (besides the two flushes of
-- create_index and build), merges of buffered changes with stored nodes,
-- compactions of the log, FAST's rewrites of unmodified pages, read buffer
-- hits and pre-cached pages, decisions of the temporal control of writes,
-- and the page cache's hits, evictions and write-backs.  The small buffers
-- flush all the time; the default ones (512 kB) never fill up.
SELECT i.ord, i.name,
	   (t->>'flushes')::bigint > 2 AS flushed_when_full,
	   (t->>'flushed_pages')::bigint >= (t->>'flushes')::bigint AS pages_per_flush,
	   (t->>'merges')::bigint > 0 AS merged,
	   (t->>'log_compactions')::bigint > 0 AS compacted,
	   (t->>'unnecessary_flushed_pages')::bigint > 0 AS unnecessary,
	   (t->>'read_buffer_hits')::bigint > 0 AS rb_hits,
	   (t->>'read_buffer_precached')::bigint > 0 AS precached,
	   (t->>'tc_sequential')::bigint + (t->>'tc_stride')::bigint + (t->>'tc_both')::bigint
		   + (t->>'tc_unfiltered')::bigint > 0 AS write_tc,
	   (t->>'cache_hits')::bigint > 0 AS cache_hits,
	   (t->>'cache_evictions')::bigint > 0 AS cache_evictions,
	   (t->>'cache_writebacks')::bigint > 0 AS writebacks
FROM fw_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'totals' AS t) s
ORDER BY i.ord;

-- buffers never hold more than their capacity between modifications
SELECT i.ord, i.name, (b->>'write_buffer_bytes')::bigint <= (b->>'write_buffer_capacity')::bigint AS within,
	   (b->>'write_buffer_pages')::bigint > 0 AS holds_pages,
	   (b->>'read_buffer_bytes')::bigint <= (b->>'read_buffer_capacity')::bigint AS rb_within
FROM fw_index i CROSS JOIN LATERAL (SELECT festival.stats(i.name)->'buffers' AS b) s
WHERE i.options->>'framework' IS NOT NULL
ORDER BY i.ord;

-------------------------------------------------------------------------------
-- Phase 5: festival.flush empties every buffer and marks the files clean
-------------------------------------------------------------------------------
SELECT count(*) AS flushed FROM (SELECT festival.flush(name) FROM fw_index) s;
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE festival.stats(name)->>'clean_on_disk' = 'true') AS clean,
	   count(*) FILTER (WHERE coalesce((festival.stats(name)->'buffers'->>'write_buffer_pages')::int, 0) = 0) AS empty_buffers,
	   count(*) FILTER (WHERE NOT EXISTS (SELECT FROM festival.buffer(name))) AS nothing_buffered
FROM fw_index;
SELECT * FROM fw_verify('flush');

-------------------------------------------------------------------------------
-- Phase 6: close, modify, reopen in the same session
-------------------------------------------------------------------------------
SELECT count(*) FILTER (WHERE closed) AS closed
FROM (SELECT festival.close(name) AS closed FROM fw_index) s;
-- another few changes, which the indices open for
CREATE TABLE fw_last AS
	SELECT 200000 + n AS id, ST_MakeEnvelope(n * 3, 400 - n, n * 3 + 5, 405 - n) AS geom
	FROM generate_series(1, 60) n;
INSERT INTO fw_src SELECT id, geom FROM fw_last;
SELECT count(*) FILTER (WHERE festival.insert(i.name, l.id, l.geom)) AS inserted
FROM fw_last l CROSS JOIN fw_index i;
DELETE FROM fw_src WHERE id IN (SELECT id FROM fw_last WHERE id % 2 = 0);
SELECT count(*) FILTER (WHERE festival.delete(i.name, l.id, l.geom)) AS deleted
FROM fw_last l CROSS JOIN fw_index i WHERE l.id % 2 = 0;
SELECT * FROM fw_verify('reopened');
SELECT festival.stats('fw_fast_all')->>'entries' AS entries, (SELECT count(*) FROM fw_src) AS source_rows;

-------------------------------------------------------------------------------
-- Phase 7: a new session.  The indices are left open with buffered
-- changes; the exit hook of the session flushes them.
-------------------------------------------------------------------------------
SELECT count(*) FILTER (WHERE EXISTS (SELECT FROM festival.buffer(name))) AS with_buffered_changes
FROM fw_index WHERE options->>'framework' IS NOT NULL;

\c
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-- every index opens clean, with nothing to replay and nothing buffered
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE festival.stats(name)->>'clean_on_disk' = 'true') AS clean,
	   count(*) FILTER (WHERE (festival.stats(name)->'totals'->>'recoveries')::int = 0) AS no_recovery,
	   count(*) FILTER (WHERE NOT EXISTS (SELECT FROM festival.buffer(name))) AS nothing_buffered,
	   count(*) FILTER (WHERE (festival.stats(name)->>'entries')::bigint = (SELECT count(*) FROM fw_src)) AS entries_exact
FROM fw_index;
SELECT * FROM fw_verify('new session');

-- and one more round of changes in the new session, checked at once
CREATE TABLE fw_again AS
	SELECT id, geom, ST_Translate(geom, -1, 1) AS new_geom FROM fw_src WHERE id % 7 = 0;
UPDATE fw_src s SET geom = a.new_geom FROM fw_again a WHERE a.id = s.id;
SELECT count(*) FILTER (WHERE festival.update(i.name, a.id, a.geom, a.id, a.new_geom)) AS updated
FROM fw_again a CROSS JOIN fw_index i;
SELECT * FROM fw_verify('after the new session');

-------------------------------------------------------------------------------
-- Phase 8: refused calls change nothing.  A query and an insert with a
-- geometry of another SRID are refused before they change anything; the
-- indices hold buffered changes (the updates above), which must not be
-- lost, with or without a log.
-------------------------------------------------------------------------------
CREATE FUNCTION pg_temp.fw_refuse(name text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	refused text := '';
BEGIN
	BEGIN
		PERFORM count(*) FROM festival.query(name, 'SRID=4326;POINT(50 50)');
	EXCEPTION WHEN invalid_parameter_value THEN
		refused := 'query';
	END;
	BEGIN
		PERFORM festival.insert(name, 999999, 'SRID=4326;POINT(50 50)');
	EXCEPTION WHEN invalid_parameter_value THEN
		refused := refused || ' and insert';
	END;
	RETURN refused;
END
$$;
SELECT count(*) FILTER (WHERE EXISTS (SELECT FROM festival.buffer(name))) AS with_buffered_changes
FROM fw_index WHERE options->>'framework' IS NOT NULL;
SELECT pg_temp.fw_refuse(name) AS refused, count(*) AS indices FROM fw_index GROUP BY 1;
SELECT * FROM fw_verify('refused calls');
SELECT count(*) AS indices,
	   count(*) FILTER (WHERE (festival.stats(name)->>'entries')::bigint = (SELECT count(*) FROM fw_src)) AS entries_exact
FROM fw_index;

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM fw_index) s;
SELECT festival.drop_device('fw_dev');
DROP FUNCTION fw_verify(text), fw_compare_all();
DROP TABLE fw_src, fw_later, fw_index, fw_brute, fw_reference, fw_gone, fw_moved, fw_last, fw_again;
RESET festival.progress_interval;
RESET client_min_messages;
