--
-- query_batch: festival.query_batch(index, gs, predicate) against PostGIS
-- brute force, and point queries for every predicate.
--
-- Row (query_no, id) of the batch must be exactly the brute-force answers
-- of gs[query_no], SELECT id FROM src WHERE ST_<predicate>(geom, g), for
-- every predicate (fx_brute in the fixture); the batch reads each node at
-- most once, so it reads fewer nodes than the same queries one by one.
--
-- Configurations: the list qb_config below (add rows to test another
-- structure).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('qb_dev', io => 'buffered');

CREATE TABLE qb_config (name text PRIMARY KEY, structure text NOT NULL, options jsonb NOT NULL,
						src regclass NOT NULL);
INSERT INTO qb_config VALUES
	('qb_mix_quad', 'rtree', '{"split": "quadratic", "page_size": 1024}', 'fx_src'),
	('qb_mix_lin_fast', 'rtree', '{"split": "linear", "page_size": 1024, "framework": "fast",
		"buffer_size": 16384}', 'fx_src'),
	('qb_mix_quad_efind', 'rtree', '{"split": "quadratic", "page_size": 2048,
		"framework": "efind", "buffer_size": 16384}', 'fx_src'),
	('qb_pts_lin', 'rtree', '{"split": "linear", "page_size": 1024}', 'fx_pts'),
	('qb_pts_quad_fast', 'rtree', '{"split": "quadratic", "page_size": 1024,
		"framework": "fast", "buffer_size": 16384}', 'fx_pts'),
	('qb_pts_lin_efind', 'rtree', '{"split": "linear", "page_size": 2048,
		"framework": "efind", "buffer_size": 16384}', 'fx_pts');

SELECT name, festival.create_index(name, structure, 'qb_dev', options, src) > 0 AS created,
	   festival.build(name) AS built,
	   (festival.stats(name)->>'height')::int > 1 AS has_internal_levels
FROM qb_config ORDER BY name;

CREATE TABLE qb_brute AS
	SELECT * FROM fx_brute('fx_src', ARRAY(SELECT qid FROM fx_query WHERE qid < 100));
INSERT INTO qb_brute
	SELECT * FROM fx_brute('fx_pts', ARRAY(SELECT qid FROM fx_query WHERE qid >= 100));

-- the query geometries of a source, as one array; query_no i is qids[i]
CREATE FUNCTION qb_queries(src regclass, OUT qids int[], OUT gs geometry[])
LANGUAGE sql AS $$
	SELECT array_agg(qid ORDER BY qid), array_agg(g ORDER BY qid)
	FROM fx_query WHERE (qid < 100) = (src = 'fx_src'::regclass)
$$;

-------------------------------------------------------------------------------
-- Every predicate, all the source's queries in one batch each: brute-force
-- answers, festival's, missing and extra (0 and 0), per index
-------------------------------------------------------------------------------
CREATE TABLE qb_answer AS
	SELECT c.name, p.pred, q.qids[r.query_no] AS qid, r.id
	FROM qb_config c CROSS JOIN fx_predicate p
	CROSS JOIN LATERAL qb_queries(c.src) q
	CROSS JOIN LATERAL festival.query_batch(c.name, q.gs, p.pred) r;

CREATE TABLE qb_expected AS
	SELECT c.name, b.pred, b.qid, b.id
	FROM qb_config c JOIN qb_brute b ON (b.qid < 100) = (c.src = 'fx_src'::regclass);
SELECT c.name,
	   (SELECT count(*) FROM qb_expected b WHERE b.name = c.name) AS brute,
	   (SELECT count(*) FROM qb_answer a WHERE a.name = c.name) AS festival,
	   (SELECT count(*) FROM (SELECT * FROM qb_expected b WHERE b.name = c.name
							  EXCEPT ALL
							  SELECT * FROM qb_answer a WHERE a.name = c.name) m) AS missing,
	   (SELECT count(*) FROM (SELECT * FROM qb_answer a WHERE a.name = c.name
							  EXCEPT ALL
							  SELECT * FROM qb_expected b WHERE b.name = c.name) e) AS extra
FROM qb_config c ORDER BY c.name;

-- per predicate for one index of each source
SELECT a.name, a.pred, count(*) AS answers,
	   count(DISTINCT a.qid) AS queries_with_answers
FROM qb_answer a JOIN fx_predicate p USING (pred)
WHERE a.name IN ('qb_mix_quad', 'qb_pts_lin')
GROUP BY a.name, p.ord, a.pred ORDER BY a.name, p.ord;

-------------------------------------------------------------------------------
-- Point queries through festival.query, every predicate, every index: the
-- fixture's point geometries (fx_compare: missing = extra = 0)
-------------------------------------------------------------------------------
SELECT c.name, count(*) AS cases, sum(t.brute) AS brute, sum(t.festival) AS festival,
	   sum(t.missing) AS missing, sum(t.extra) AS extra
FROM qb_config c
CROSS JOIN LATERAL fx_compare(c.name, 'qb_brute',
	ARRAY(SELECT qid FROM fx_query
		  WHERE GeometryType(g) = 'POINT' AND (qid < 100) = (c.src = 'fx_src'::regclass))) t
GROUP BY c.name ORDER BY c.name;
-- the point queries: inside, on corners and edges, in a hole, on a ring
SELECT qid, label FROM fx_query WHERE GeometryType(g) = 'POINT' ORDER BY qid;

-------------------------------------------------------------------------------
-- Node reads: the batch reads each node once for all the queries reaching it
-------------------------------------------------------------------------------
CREATE FUNCTION qb_nodes(idx text) RETURNS bigint
LANGUAGE sql AS $$ SELECT (festival.stats(idx)->'totals'->>'nodes_visited')::bigint $$;

CREATE TABLE qb_reads (name text, pred text, batch bigint, separate bigint, pages bigint);
DO $$
DECLARE c record; p text; before bigint; batch bigint; separate bigint;
BEGIN
	FOR c IN SELECT * FROM qb_config LOOP
		FOREACH p IN ARRAY ARRAY['intersects', 'contains'] LOOP
			before := qb_nodes(c.name);
			PERFORM count(*) FROM festival.query_batch(c.name, (qb_queries(c.src)).gs, p);
			batch := qb_nodes(c.name) - before;
			before := qb_nodes(c.name);
			PERFORM count(*) FROM unnest((qb_queries(c.src)).gs) g,
								  LATERAL festival.query(c.name, g, p);
			separate := qb_nodes(c.name) - before;
			INSERT INTO qb_reads VALUES (c.name, p, batch, separate,
										 (festival.stats(c.name)->>'pages')::bigint);
		END LOOP;
	END LOOP;
END
$$;
-- batch < separate, and the batch never reads more nodes than the tree has
SELECT name, pred, batch < separate AS batch_reads_fewer, batch <= pages AS at_most_once,
	   round(separate::numeric / batch, 1) AS ratio
FROM qb_reads ORDER BY name, pred;
SELECT name, festival.stats(name)->'totals'->'batch_queries' AS batch_queries
FROM qb_config ORDER BY name;

-------------------------------------------------------------------------------
-- dwithin in a batch equals ST_DWithin brute force
-------------------------------------------------------------------------------
SELECT (SELECT count(*) FROM fx_query q JOIN fx_src s
		ON ST_DWithin(CASE WHEN ST_HasArc(s.geom) THEN ST_CurveToLine(s.geom, 32, 0, 0) ELSE s.geom END,
					  CASE WHEN ST_HasArc(q.g) THEN ST_CurveToLine(q.g, 32, 0, 0) ELSE q.g END, 7.5)
		WHERE q.qid < 100) AS brute,
	   (SELECT count(*) FROM (
			SELECT q.qids[r.query_no] AS qid, r.id
			FROM qb_queries('fx_src') q,
				 LATERAL festival.query_batch('qb_mix_lin_fast', q.gs, 'dwithin', 7.5) r
			EXCEPT
			SELECT q.qid, s.id FROM fx_query q JOIN fx_src s
			ON ST_DWithin(CASE WHEN ST_HasArc(s.geom) THEN ST_CurveToLine(s.geom, 32, 0, 0) ELSE s.geom END,
						  CASE WHEN ST_HasArc(q.g) THEN ST_CurveToLine(q.g, 32, 0, 0) ELSE q.g END, 7.5)
			WHERE q.qid < 100) e) AS extra,
	   (SELECT count(*) FROM qb_queries('fx_src') q,
			LATERAL festival.query_batch('qb_mix_lin_fast', q.gs, 'dwithin', 7.5) r) AS festival;

-- a batch of one equals festival.query; repeated geometries answer alike
SELECT count(*) AS answers,
	   count(*) FILTER (WHERE query_no = 1) = count(*) FILTER (WHERE query_no = 2) AS same
FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(50 50)'::geometry, 'POINT(50 50)'], 'intersects');
SELECT count(*) FROM festival.query('qb_mix_quad', 'POINT(50 50)');

-------------------------------------------------------------------------------
-- Answer ids come in increasing order, each once (query_exec.c sorts them:
-- a radix sort from 256 ids, a comparison sort below that or when the ids
-- span more than 2^33): 900 points, ids from -450 on, or spread over 2^40
-- (qb_sort_wide), each inserted twice; every order and count against
-- PostGIS, for festival.query and for a batch
-------------------------------------------------------------------------------
CREATE TABLE qb_sort_src AS
	SELECT (i - 450)::bigint AS id, ST_MakePoint((i * 37) % 30, (i * 11) % 30) AS geom
	FROM generate_series(0, 899) i;
CREATE TABLE qb_sort_wide AS
	SELECT CASE WHEN id % 2 = 0 THEN id ELSE id * 1099511627 END AS id, geom FROM qb_sort_src;
SELECT s, festival.create_index(s, 'rtree', 'qb_dev', '{"page_size": 1024}', s::regclass) > 0
	   AND festival.build(s) = 900 AS built,
	   (SELECT count(*) FROM (SELECT festival.insert(s, id, geom) FROM qb_sort_src
							  WHERE s = 'qb_sort_src' UNION ALL
							  SELECT festival.insert(s, id, geom) FROM qb_sort_wide
							  WHERE s = 'qb_sort_wide') t) AS inserted_again
FROM unnest(ARRAY['qb_sort_src', 'qb_sort_wide']) s ORDER BY s;
CREATE FUNCTION qb_sorted(ix text, src regclass, w geometry, OUT festival_ids bigint[],
						  OUT batch_ids bigint[], OUT postgis_ids bigint[])
LANGUAGE plpgsql AS $$
BEGIN
	SELECT array_agg(q.id ORDER BY o) INTO festival_ids
	FROM festival.query(ix, w) WITH ORDINALITY q(id, o);
	SELECT array_agg(b.id ORDER BY o) INTO batch_ids
	FROM festival.query_batch(ix, ARRAY[w, w]) WITH ORDINALITY b(query_no, id, o)
	WHERE b.query_no = 2;
	EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %s WHERE ST_Intersects(geom, $1)', src)
		INTO postgis_ids USING w;
END
$$;
SELECT s, w, cardinality(r.postgis_ids) AS answers,
	   r.festival_ids = r.postgis_ids AS query_sorted_once,
	   r.batch_ids = r.postgis_ids AS batch_sorted_once
FROM unnest(ARRAY['qb_sort_src', 'qb_sort_wide']) s,
	 unnest(ARRAY['POLYGON((0 0, 30 0, 30 30, 0 30, 0 0))'::geometry,
				  'POLYGON((0 0, 12 0, 12 12, 0 12, 0 0))']) WITH ORDINALITY g(geom, w),
	 LATERAL qb_sorted(s, s::regclass, g.geom) r
ORDER BY s, w;
SELECT festival.drop_index(s) FROM unnest(ARRAY['qb_sort_src', 'qb_sort_wide']) s;
DROP FUNCTION qb_sorted(text, regclass, geometry);
DROP TABLE qb_sort_src, qb_sort_wide;

-------------------------------------------------------------------------------
-- Errors
-------------------------------------------------------------------------------
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY[]::geometry[]);
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(1 1)'::geometry, NULL]);
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(1 1)'::geometry], 'crosses');
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(1 1)'::geometry], 'dwithin');
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(1 1)'::geometry], 'dwithin', -2);
\set VERBOSITY terse
SELECT * FROM festival.query_batch('qb_mix_quad', NULL);
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY[['POINT(1 1)'::geometry], ['POINT(2 2)']]);
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(1 1)'::geometry, 'POINT EMPTY']);
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(1 1)'::geometry, 'SRID=3857;POINT(1 1)']);
SELECT * FROM festival.query_batch('qb_mix_quad', ARRAY['POINT(1 1)'::geometry], 'intersects', 3);
SELECT * FROM festival.query_batch('qb_nothing', ARRAY['POINT(1 1)'::geometry]);
\set VERBOSITY default

SELECT festival.drop_index(name) FROM qb_config ORDER BY name;
SELECT festival.drop_device('qb_dev');
DROP TABLE qb_config, qb_brute, qb_answer, qb_expected, qb_reads;
DROP FUNCTION qb_queries(regclass), qb_nodes(text);
RESET client_min_messages;
