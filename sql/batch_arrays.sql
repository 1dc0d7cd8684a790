--
-- batch_arrays: festival.query_batch_ids and festival.knn_batch_ids, the
-- batches that return one row per query with its answers as arrays.
--
-- Compared with three independent answers: festival.query_batch (its rows
-- (query_no, id) gathered per query), festival.knn (one call per point),
-- and PostGIS brute force over the source (fx_brute for every predicate;
-- ORDER BY ST_Distance, id LIMIT k for kNN, over the linearised shapes
-- festival measures, fixture.lin).  Structures: quadratic R-tree, R*-tree
-- and xBR+-tree (its own batch search), grid file (GFFM) and LB-Grid, over
-- the fixture's points (fx_pts, 1,221 with copies) and 400 generated
-- points; R-trees also over the fixture's mixed geometries (fx_src:
-- polygons with holes, lines, arcs), where every answer is refined.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.create_device('ba_dev', io => 'buffered');

-- 400 uniform points in 0..1000 (festival's generator, fixed seed)
SELECT festival.generate_points('ba_rand', 400, 'uniform', 26, 'BOX(0 0,1000 1000)'::box2d);
SELECT count(*) AS rand_points FROM ba_rand;

CREATE TABLE ba_config (name text PRIMARY KEY, structure text NOT NULL, options jsonb NOT NULL,
						src regclass NOT NULL);
INSERT INTO ba_config VALUES
	('ba_mix_quad', 'rtree', '{"split": "quadratic", "page_size": 1024}', 'fx_src'),
	('ba_mix_rstar', 'rstartree', '{"page_size": 1024}', 'fx_src'),
	('ba_pts_quad', 'rtree', '{"split": "quadratic", "page_size": 1024}', 'fx_pts'),
	('ba_pts_rstar', 'rstartree', '{"page_size": 1024}', 'fx_pts'),
	('ba_pts_xbr', 'xbrtree', '{"page_size": 1024}', 'fx_pts'),
	('ba_pts_grid', 'gridfile', '{"page_size": 1024}', 'fx_pts'),
	('ba_pts_lbgrid', 'lbgrid', '{"page_size": 1024}', 'fx_pts'),
	('ba_rand_quad', 'rtree', '{"split": "quadratic", "page_size": 1024}', 'ba_rand'),
	('ba_rand_rstar', 'rstartree', '{"page_size": 1024}', 'ba_rand'),
	('ba_rand_grid', 'gridfile', '{"page_size": 1024}', 'ba_rand');

SELECT name, festival.create_index(name, structure, 'ba_dev', options, src) > 0 AS created,
	   festival.build(name) AS built
FROM ba_config ORDER BY name;

-- query geometries: the fixture's for fx_src (qid < 100) and fx_pts
-- (qid >= 100); for ba_rand 60 windows of three sizes (some empty: past
-- the extent), two points and a polygon (qid >= 1000)
INSERT INTO fx_query
SELECT 1000 + i, 'window ' || i,
	   ST_MakeEnvelope((i * 137) % 1000 - 20, (i * 311) % 1000 - 20,
					   (i * 137) % 1000 - 20 + (ARRAY[5, 40, 150])[1 + i % 3],
					   (i * 311) % 1000 - 20 + (ARRAY[5, 40, 150])[1 + i % 3])
FROM generate_series(0, 59) i;
INSERT INTO fx_query VALUES
	(1060, 'a generated point', (SELECT geom FROM ba_rand ORDER BY id LIMIT 1)),
	(1061, 'a point far away', 'POINT(5000 5000)'),
	(1062, 'triangle', 'POLYGON((100 100, 900 150, 400 800, 100 100))');

CREATE FUNCTION ba_qids(src regclass) RETURNS int[]
LANGUAGE sql AS $$
	SELECT array_agg(qid ORDER BY qid) FROM fx_query
	WHERE CASE src WHEN 'fx_src'::regclass THEN qid < 100
				   WHEN 'fx_pts'::regclass THEN qid BETWEEN 100 AND 999
				   ELSE qid >= 1000 END
$$;
CREATE FUNCTION ba_gs(src regclass) RETURNS geometry[]
LANGUAGE sql AS $$
	SELECT array_agg(g ORDER BY qid) FROM fx_query WHERE qid = ANY (ba_qids(src))
$$;

CREATE TABLE ba_brute AS SELECT 'fx_src'::regclass AS src, * FROM fx_brute('fx_src', ba_qids('fx_src'));
INSERT INTO ba_brute SELECT 'fx_pts', * FROM fx_brute('fx_pts', ba_qids('fx_pts'));
INSERT INTO ba_brute SELECT 'ba_rand', * FROM fx_brute('ba_rand', ba_qids('ba_rand'));

-------------------------------------------------------------------------------
-- query_batch_ids, every predicate, all of a source's queries in one call
-------------------------------------------------------------------------------
CREATE TABLE ba_arrays AS
	SELECT c.name, p.pred, r.query_no, (ba_qids(c.src))[r.query_no] AS qid, r.ids
	FROM ba_config c CROSS JOIN fx_predicate p
	CROSS JOIN LATERAL festival.query_batch_ids(c.name, ba_gs(c.src), p.pred) r;

-- one row per query, query_no 1..n in order; every array sorted, without
-- duplicates, one-dimensional and 1-based (or empty)
SELECT c.name,
	   (SELECT count(*) FROM ba_arrays a WHERE a.name = c.name)
		 = cardinality(ba_qids(c.src)) * (SELECT count(*) FROM fx_predicate) AS one_row_per_query,
	   (SELECT bool_and(a.qid IS NOT NULL) FROM ba_arrays a WHERE a.name = c.name) AS numbered,
	   (SELECT bool_and(a.ids = ARRAY(SELECT DISTINCT x FROM unnest(a.ids) x ORDER BY x))
		FROM ba_arrays a WHERE a.name = c.name) AS sorted_unique,
	   (SELECT bool_and(cardinality(a.ids) = 0 OR (array_ndims(a.ids) = 1 AND array_lower(a.ids, 1) = 1))
		FROM ba_arrays a WHERE a.name = c.name) AS plain_arrays
FROM ba_config c ORDER BY c.name;

-- against brute force: answers, missing, extra, empty arrays (= queries
-- brute force answers nothing)
SELECT c.name,
	   (SELECT count(*) FROM ba_brute b WHERE b.src = c.src) AS brute,
	   (SELECT count(*) FROM ba_arrays a, unnest(a.ids) WHERE a.name = c.name) AS festival,
	   (SELECT count(*) FROM (SELECT pred, qid, id FROM ba_brute b WHERE b.src = c.src
							  EXCEPT ALL
							  SELECT pred, qid, id FROM ba_arrays a, unnest(a.ids) id
							  WHERE a.name = c.name) m) AS missing,
	   (SELECT count(*) FROM (SELECT pred, qid, id FROM ba_arrays a, unnest(a.ids) id
							  WHERE a.name = c.name
							  EXCEPT ALL
							  SELECT pred, qid, id FROM ba_brute b WHERE b.src = c.src) e) AS extra,
	   (SELECT count(*) FROM ba_arrays a WHERE a.name = c.name AND cardinality(a.ids) = 0) AS empty,
	   (SELECT count(*) FROM ba_arrays a WHERE a.name = c.name)
		 - (SELECT count(DISTINCT (b.pred, b.qid)) FROM ba_brute b WHERE b.src = c.src) AS brute_empty
FROM ba_config c ORDER BY c.name;

-- against query_batch: the same answers per query (its rows gathered
-- into sorted arrays), every predicate
CREATE TABLE ba_rows AS
	SELECT c.name, p.pred, r.query_no, array_agg(r.id ORDER BY r.id) AS ids
	FROM ba_config c CROSS JOIN fx_predicate p
	CROSS JOIN LATERAL festival.query_batch(c.name, ba_gs(c.src), p.pred) r
	GROUP BY 1, 2, 3;
SELECT a.name, count(*) AS cases,
	   count(*) FILTER (WHERE a.ids IS DISTINCT FROM coalesce(r.ids, '{}')) AS differ
FROM ba_arrays a LEFT JOIN ba_rows r USING (name, pred, query_no)
GROUP BY a.name ORDER BY a.name;

-- dwithin at distances 0, 2.5 and 40: against brute force (ST_DWithin over
-- the linearised shapes festival measures) and query_batch
CREATE FUNCTION ba_dwithin_brute(src regclass, d float8) RETURNS TABLE (query_no int, ids bigint[])
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT q.no::int, ARRAY(SELECT s.id::bigint FROM %s s
								WHERE ST_DWithin(fixture.lin(s.geom), fixture.lin(q.g), $2) ORDER BY 1)
		 FROM (SELECT g, row_number() OVER (ORDER BY qid) AS no FROM fx_query
			   WHERE qid = ANY ($1)) q', src)
	USING ba_qids(src), d;
END
$$;
CREATE TABLE ba_dist (dist float8);
INSERT INTO ba_dist VALUES (0), (2.5), (40);
CREATE TABLE ba_dw AS
	SELECT c.name, d.dist, a.query_no, a.ids
	FROM ba_config c CROSS JOIN ba_dist d
	CROSS JOIN LATERAL festival.query_batch_ids(c.name, ba_gs(c.src), 'dwithin', d.dist) a;
CREATE TABLE ba_dw_rows AS
	SELECT c.name, d.dist, r.query_no, array_agg(r.id ORDER BY r.id) AS ids
	FROM ba_config c CROSS JOIN ba_dist d
	CROSS JOIN LATERAL festival.query_batch(c.name, ba_gs(c.src), 'dwithin', d.dist) r
	GROUP BY 1, 2, 3;
CREATE TABLE ba_dw_brute AS
	SELECT s.src, d.dist, b.query_no, b.ids
	FROM (SELECT DISTINCT src FROM ba_config) s CROSS JOIN ba_dist d
	CROSS JOIN LATERAL ba_dwithin_brute(s.src, d.dist) b;
SELECT a.name, a.dist, count(*) AS queries,
	   count(*) FILTER (WHERE cardinality(a.ids) > 0) AS with_answers,
	   count(*) FILTER (WHERE a.ids IS DISTINCT FROM b.ids) AS differ_from_brute,
	   count(*) FILTER (WHERE a.ids IS DISTINCT FROM coalesce(r.ids, '{}')) AS differ_from_batch
FROM ba_dw a JOIN ba_config c USING (name)
LEFT JOIN ba_dw_brute b ON b.src = c.src AND b.dist = a.dist AND b.query_no = a.query_no
LEFT JOIN ba_dw_rows r ON r.name = a.name AND r.dist = a.dist AND r.query_no = a.query_no
GROUP BY a.name, a.dist ORDER BY a.name, a.dist;

-- the generic depth-first batch where a structure has its own (xBR+-tree,
-- grid files): the same arrays
SET festival.generic_query_batch = on;
SELECT c.name, count(*) AS queries,
	   count(*) FILTER (WHERE g.ids IS DISTINCT FROM a.ids) AS differ
FROM ba_config c
CROSS JOIN LATERAL festival.query_batch_ids(c.name, ba_gs(c.src)) g
JOIN ba_arrays a ON a.name = c.name AND a.pred = 'intersects' AND a.query_no = g.query_no
WHERE c.structure IN ('xbrtree', 'gridfile', 'lbgrid')
GROUP BY c.name ORDER BY c.name;
RESET festival.generic_query_batch;

-- counters: one batch, a query per geometry, a result per answer
CREATE FUNCTION ba_totals(idx text, OUT batch_queries bigint, OUT queries bigint, OUT results bigint)
LANGUAGE sql AS $$
	SELECT (t->>'batch_queries')::bigint, (t->>'queries')::bigint, (t->>'results')::bigint
	FROM (SELECT festival.stats(idx)->'totals' AS t) s
$$;
CREATE TABLE ba_before AS SELECT * FROM ba_totals('ba_pts_quad');
SELECT count(*) AS rows, sum(cardinality(ids)) AS answers
FROM festival.query_batch_ids('ba_pts_quad', ba_gs('fx_pts'));
SELECT a.batch_queries - b.batch_queries AS batch_queries, a.queries - b.queries AS queries,
	   a.results - b.results AS results
FROM ba_totals('ba_pts_quad') a, ba_before b;

-------------------------------------------------------------------------------
-- knn_batch_ids: against festival.knn (the same ids, the same distances bit
-- for bit, in the same order) and against brute force, k = 1, 10, 64 (the
-- largest k pruned by the k-th distance, and the most ids the search keeps
-- in its array of ids returned), 65, 100 and more than the index holds
-------------------------------------------------------------------------------
CREATE TABLE ba_knn_query (src regclass, ord int, g geometry);
INSERT INTO ba_knn_query VALUES
	('fx_src', 1, 'POINT(50 50)'), ('fx_src', 2, 'POINT(253.5 253.5)'),
	('fx_src', 3, 'POINT(-1000 2000)'), ('fx_src', 4, ST_MakeEnvelope(12, 12, 38, 27)),
	('fx_src', 5, 'LINESTRING(0 5, 200 5)'),
	('fx_src', 6, 'POLYGON((100 0, 200 0, 200 100, 100 100, 100 0), (130 30, 170 30, 170 70, 130 70, 130 30))'),
	('fx_src', 7, 'POINT(75 62)'),
	('fx_pts', 1, 'POINT(0 0)'), ('fx_pts', 2, 'POINT(45 45)'), ('fx_pts', 3, 'POINT(150 150)'),
	('fx_pts', 4, 'POINT(-10 310)'), ('fx_pts', 5, 'POINT(225 75)'),
	('fx_pts', 6, ST_MakeEnvelope(12, 12, 38, 27));
INSERT INTO ba_knn_query
SELECT 'ba_rand', 1 + i, ST_MakePoint((i * 211) % 1100 - 50, (i * 97) % 1100 - 50)
FROM generate_series(0, 29) i;

CREATE FUNCTION ba_knn_gs(src regclass) RETURNS geometry[]
LANGUAGE sql AS $$ SELECT array_agg(g ORDER BY ord) FROM ba_knn_query q WHERE q.src = $1 $$;

CREATE FUNCTION ba_knn_brute(src regclass, g geometry, k int, OUT ids bigint[], OUT distances float8[])
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('SELECT array_agg(id ORDER BY d, id), array_agg(d ORDER BY d, id)
					FROM (SELECT id::bigint AS id, ST_Distance(fixture.lin(geom), $1) AS d FROM %s
						  ORDER BY 2, 1 LIMIT $2) b', src)
	INTO ids, distances USING g, k;
END
$$;

CREATE TABLE ba_knn AS
	SELECT c.name, c.src, k.k, r.query_no, r.ids, r.distances
	FROM ba_config c CROSS JOIN (VALUES (1), (10), (64), (65), (100), (5000)) k(k)
	CROSS JOIN LATERAL festival.knn_batch_ids(c.name, ba_knn_gs(c.src), k.k) r;

SELECT b.name, b.k, count(*) AS queries, sum(cardinality(b.ids)) AS neighbours,
	   count(*) FILTER (WHERE cardinality(b.ids) <> cardinality(b.distances)) AS lengths_differ,
	   count(*) FILTER (WHERE (b.ids, b.distances) IS DISTINCT FROM
		   (SELECT (array_agg(n.id ORDER BY n.ord), array_agg(n.distance ORDER BY n.ord))
			FROM festival.knn(b.name, (ba_knn_gs(b.src))[b.query_no], b.k)
				 WITH ORDINALITY n(id, distance, ord))) AS differ_from_knn,
	   count(*) FILTER (WHERE (b.ids, b.distances) IS DISTINCT FROM
		   (SELECT (x.ids, x.distances) FROM ba_knn_brute(b.src, (ba_knn_gs(b.src))[b.query_no], b.k) x))
		   AS differ_from_brute
FROM ba_knn b
GROUP BY b.name, b.k ORDER BY b.name, b.k;

-- the same queries in the opposite order: every query its answer above
SELECT c.name, k.k, count(*) AS queries,
	   count(*) FILTER (WHERE (r.ids, r.distances) IS DISTINCT FROM (b.ids, b.distances))
		   AS differ_reversed
FROM ba_config c CROSS JOIN (VALUES (10), (65)) k(k)
CROSS JOIN LATERAL festival.knn_batch_ids(c.name,
	(SELECT array_agg(g ORDER BY ord DESC) FROM ba_knn_query q WHERE q.src = c.src), k.k) r
JOIN ba_knn b ON b.name = c.name AND b.k = k.k
			 AND b.query_no = cardinality(ba_knn_gs(c.src)) + 1 - r.query_no
GROUP BY c.name, k.k ORDER BY c.name, k.k;

-- A taller tree (20,000 points, 1 kB pages: some 25 entries a node): k up
-- to 2,000 reads some hundred leaves, so the search's queue holds more
-- items and more nodes' runs than it first allocates room for (knn.c) and
-- grows; pruned (k = 10, 64) and unpruned (65, 300, 2000) searches against
-- festival.knn and brute force.
SELECT festival.generate_points('ba_big', 20000, 'uniform', 27, 'BOX(0 0,1000 1000)'::box2d);
SELECT festival.create_index('ba_big_quad', 'rtree', 'ba_dev',
							 '{"split": "quadratic", "page_size": 1024}', 'ba_big') > 0 AS created,
	   festival.build('ba_big_quad') AS built;
INSERT INTO ba_knn_query
SELECT 'ba_big', 1 + i, ST_MakePoint((i * 389) % 1200 - 100, (i * 157) % 1200 - 100)
FROM generate_series(0, 7) i;
SELECT r.k, count(*) AS queries, sum(cardinality(r.ids)) AS neighbours,
	   count(*) FILTER (WHERE (r.ids, r.distances) IS DISTINCT FROM
		   (SELECT (array_agg(n.id ORDER BY n.ord), array_agg(n.distance ORDER BY n.ord))
			FROM festival.knn('ba_big_quad', (ba_knn_gs('ba_big'))[r.query_no], r.k)
				 WITH ORDINALITY n(id, distance, ord))) AS differ_from_knn,
	   count(*) FILTER (WHERE (r.ids, r.distances) IS DISTINCT FROM
		   (SELECT (x.ids, x.distances) FROM ba_knn_brute('ba_big', (ba_knn_gs('ba_big'))[r.query_no], r.k) x))
		   AS differ_from_brute
FROM (SELECT k.k, b.* FROM (VALUES (10), (64), (65), (300), (2000)) k(k)
	  CROSS JOIN LATERAL festival.knn_batch_ids('ba_big_quad', ba_knn_gs('ba_big'), k.k) b) r
GROUP BY r.k ORDER BY r.k;

-------------------------------------------------------------------------------
-- Errors: those of query_batch and knn
-------------------------------------------------------------------------------
\set VERBOSITY default
SELECT * FROM festival.query_batch_ids('ba_pts_quad', NULL);
SELECT * FROM festival.query_batch_ids('ba_pts_quad', '{}'::geometry[]);
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY['POINT(1 1)'::geometry, NULL]);
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY[ARRAY['POINT(1 1)'::geometry]]);
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY['POINT EMPTY'::geometry]);
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY['POINT(1 1)'::geometry], 'near');
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY['POINT(1 1)'::geometry], 'dwithin');
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY['POINT(1 1)'::geometry], 'dwithin', -1);
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY['POINT(1 1)'::geometry], 'within', 3);
SELECT * FROM festival.query_batch_ids('ba_pts_quad', ARRAY['SRID=4326;POINT(1 1)'::geometry]);
SELECT * FROM festival.query_batch_ids('ba_nothing', ARRAY['POINT(1 1)'::geometry]);
SELECT * FROM festival.knn_batch_ids('ba_pts_quad', NULL, 3);
SELECT * FROM festival.knn_batch_ids('ba_pts_quad', '{}'::geometry[], 3);
SELECT * FROM festival.knn_batch_ids('ba_pts_quad', ARRAY[NULL, 'POINT(1 1)'::geometry], 3);
SELECT * FROM festival.knn_batch_ids('ba_pts_quad', ARRAY['POINT(1 1)'::geometry], 0);
SELECT * FROM festival.knn_batch_ids('ba_pts_quad', ARRAY['POINT(1 1)'::geometry], NULL);
SELECT * FROM festival.knn_batch_ids('ba_pts_quad', ARRAY['SRID=4326;POINT(1 1)'::geometry], 3);
SELECT * FROM festival.knn_batch_ids('ba_nothing', ARRAY['POINT(1 1)'::geometry], 3);
\set VERBOSITY terse

-- an empty index answers empty arrays
SELECT festival.create_index('ba_empty', 'rtree', 'ba_dev', '{}') > 0 AS created;
SELECT * FROM festival.query_batch_ids('ba_empty', ARRAY['POINT(1 1)'::geometry, ST_MakeEnvelope(0, 0, 9, 9)]);
SELECT * FROM festival.knn_batch_ids('ba_empty', ARRAY['POINT(1 1)'::geometry], 4);

SELECT festival.drop_index(name) FROM festival.index WHERE name LIKE 'ba\_%' ORDER BY name;
SELECT festival.drop_device('ba_dev');
DELETE FROM fx_query WHERE qid >= 1000;
DROP TABLE ba_before, ba_config, ba_brute, ba_arrays, ba_rows, ba_dist, ba_dw, ba_dw_rows, ba_dw_brute, ba_knn, ba_knn_query, ba_rand, ba_big;
DROP FUNCTION ba_totals, ba_qids, ba_gs, ba_dwithin_brute, ba_knn_gs, ba_knn_brute;
